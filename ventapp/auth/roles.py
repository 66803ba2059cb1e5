"""What each role may do with quotas and usage (issue 15, "Roles").

Only an operator sets another user's quota, raises a quota (above ``TFAGENTS_DAILY_TOKEN_LIMIT``
or above what an operator set) and reads another user's usage; a user may lower their own quota
only. The API (``PUT /api/usage/quota``) and the UI's usage page both go through
:func:`set_quota`, so the rule cannot differ between them. Blocking: call in a thread.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine

from ventapp.auth.service import AuthRejected, Caller
from ventapp.billing.guard import QuotaStatus, quota_status, set_user_quota
from ventapp.config import Settings


def lowers(new_limit: int, current_limit: int) -> bool:
    """True when ``new_limit`` allows no more tokens than ``current_limit`` (0 = unlimited)."""
    if current_limit == 0:
        return True
    return new_limit != 0 and new_limit <= current_limit


def check_usage_reader(caller: Caller, owner: str) -> None:
    """Refuse a user reading someone else's usage.

    Raises:
        AuthRejected: 403 ``operator_only``.
    """
    if owner != caller.name and not caller.is_operator:
        raise AuthRejected.by_key(403, "operator_only", "refusal.auth.others_usage")


def set_quota(engine: Engine, settings: Settings, caller: Caller, owner: str, limit: int) -> QuotaStatus:
    """Set ``owner``'s daily token limit (tokens, 0 = unlimited) if ``caller`` may.

    Returns:
        The owner's quota after the change.

    Raises:
        AuthRejected: 403 ``operator_only`` — another user's quota, or a raise, by a non-operator.
        ValueError: ``limit`` outside ``0..MAX_DAILY_TOKEN_LIMIT``.
        sqlalchemy.exc.SQLAlchemyError: The database failed.
    """
    if not caller.is_operator:
        if owner != caller.name:
            raise AuthRejected.by_key(403, "operator_only", "refusal.auth.others_quota")
        current = quota_status(engine, settings, owner).daily_token_limit
        if not lowers(limit, current):
            raise AuthRejected.by_key(403, "operator_only", "refusal.auth.raise_quota")
    set_user_quota(engine, owner, limit)
    return quota_status(engine, settings, owner)
