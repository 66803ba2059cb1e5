"""What each role may do with quotas and usage (issue 15, "Roles").

Only an operator sets another user's quota, sets a user's ceiling (above
``TFAGENTS_DAILY_TOKEN_LIMIT``, or a different one) and reads another user's usage. A user may set
their own quota to anything up to their ceiling — what an operator set, else the default — so a
limit they lowered is always theirs to raise again (tester, 2 Dec: one who set it below today's
usage was locked out until midnight with no undo). The API (``PUT /api/usage/quota``) and the UI's
usage page both go through :func:`set_quota`, so the rule cannot differ between them. Blocking:
call in a thread.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine

from ventapp.auth.service import AuthRejected, Caller
from ventapp.billing.guard import QuotaStatus, more_generous, quota_status, set_user_quota
from ventapp.config import Settings


def within(new_limit: int, ceiling: int) -> bool:
    """True when ``new_limit`` allows no more tokens than ``ceiling`` (both tokens; 0 = unlimited)."""
    return not more_generous(new_limit, ceiling)


def check_usage_reader(caller: Caller, owner: str) -> None:
    """Refuse a user reading someone else's usage.

    Raises:
        AuthRejected: 403 ``operator_only``.
    """
    if owner != caller.name and not caller.is_operator:
        raise AuthRejected.by_key(403, "operator_only", "refusal.auth.others_usage")


def set_quota(engine: Engine, settings: Settings, caller: Caller, owner: str, limit: int) -> QuotaStatus:
    """Set ``owner``'s daily token limit (tokens, 0 = unlimited) if ``caller`` may.

    A user sets their own within their ceiling (:attr:`QuotaStatus.ceiling`); an operator's
    limit, for anyone, becomes that user's ceiling too.

    Returns:
        The owner's quota after the change.

    Raises:
        AuthRejected: 403 ``operator_only`` — another user's quota, or a limit above the
            ceiling, by a non-operator (``details.max_daily_token_limit``: the ceiling).
        ValueError: ``limit`` outside ``0..MAX_DAILY_TOKEN_LIMIT``.
        sqlalchemy.exc.SQLAlchemyError: The database failed.
    """
    if caller.is_operator:
        set_user_quota(engine, owner, limit, ceiling=limit)
        return quota_status(engine, settings, owner)
    if owner != caller.name:
        raise AuthRejected.by_key(403, "operator_only", "refusal.auth.others_quota")
    ceiling = quota_status(engine, settings, owner).ceiling
    if not within(limit, ceiling):
        raise AuthRejected.by_key(
            403,
            "operator_only",
            "refusal.auth.raise_quota",
            details={"max_daily_token_limit": ceiling},
            ceiling=ceiling,
        )
    # Stored with the ceiling it was checked against, so an old row's implied one (a limit above
    # the default, set before migration 0015) is not lost when the user lowers below it.
    set_user_quota(engine, owner, limit, ceiling=ceiling if ceiling != settings.daily_token_limit else None)
    return quota_status(engine, settings, owner)
