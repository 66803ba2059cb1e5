"""The pre-run guard and quotas: refuse a run before the model is called, never after.

Two checks, in order (spec 002, "配置" and "执行可靠性与隔离"):

1. the configured model has a price — otherwise its usage could not be billed and
   the run is refused (503 ``model_unpriced``) unless ``BILLING_ALLOW_UNPRICED=1``,
   which bills it at zero (fail-closed by default);
2. the user is under their daily token quota (input + output tokens, estimates
   included, settlements still pending included) — otherwise 429 ``quota`` with
   ``retry_after`` = seconds until the quota resets at 00:00 Asia/Shanghai; its sentence says
   who can raise the limit (the user, on the usage page, when they lowered it below their
   ceiling; else an operator: :func:`quota_refusal`).

A user's own quota (``PUT /api/usage/quota``) wins over ``TFAGENTS_DAILY_TOKEN_LIMIT``;
0 means unlimited either way.

Between model calls a running run is checked again without reading the database: it keeps
the :class:`QuotaReservation` the pre-run check read (what was left when it started) and
compares it with what the run has used since plus what the user's other runs in this
process booked since (:class:`BookedTokens`). Runs of another process sharing the database,
and a quota changed while the run streams, count from the user's next run on.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy.engine import Engine

from ventapp.billing.day import USAGE_TZ_NAME, seconds_until_reset, usage_day
from ventapp.billing.pricing import Price, price_of
from ventapp.config import Settings
from ventapp.db import billing_store
from ventapp.i18n import DEFAULT_LANG, formats, t
from ventapp.i18n.templates import template_pattern
from ventapp.refusal import Refusal

MAX_DAILY_TOKEN_LIMIT = 2**31 - 1
"""Largest storable quota (tokens); larger values are refused with ValueError."""


class BillingRejected(Refusal):
    """Billing refused a run before it started; nothing was sent to the model.

    A :class:`~ventapp.refusal.Refusal`: 503 ``model_unpriced`` or 429 ``quota`` (``retry_after``:
    seconds until the quota resets); ``message`` names the fix, ``key``/``params`` word it in
    another language (``quota``: ``used``, ``limit``, ``tz``; ``model_unpriced``: ``model``).
    """


@dataclass(frozen=True)
class QuotaStatus:
    """A user's quota on one usage day.

    Attributes:
        daily_token_limit: Tokens per day (input + output); 0 = unlimited.
        source: ``operator`` for a limit an operator set on the user (the limit in force is the
            ceiling an operator stored; a user raising theirs back to it counts too), ``user`` for
            one the user set below it, ``default`` for ``TFAGENTS_DAILY_TOKEN_LIMIT``.
        used_tokens: Tokens booked today plus tokens of pending settlements of today.
        remaining_tokens: ``limit - used`` (never below 0), or None when unlimited.
        ceiling: The most the user may set their own limit to (tokens; 0 = unlimited): what an
            operator set, else ``TFAGENTS_DAILY_TOKEN_LIMIT`` (see :func:`more_generous`).
    """

    daily_token_limit: int
    source: Literal["operator", "user", "default"]
    used_tokens: int
    remaining_tokens: int | None
    ceiling: int = 0

    @property
    def exhausted(self) -> bool:
        """True when a limit is set and today's usage has reached it."""
        return self.remaining_tokens is not None and self.remaining_tokens <= 0


class BookedTokens:
    """Tokens this process booked per user since it started (every run's settled calls).

    What lets a run's :class:`QuotaReservation` see the user's other runs without a database
    read between model calls. One integer per user; only ever grows.
    """

    def __init__(self) -> None:
        self._by_user: dict[str, int] = {}

    def add(self, user_name: str, tokens: int) -> None:
        """Count ``tokens`` (input + output) just booked for ``user_name`` (ledger or pending)."""
        self._by_user[user_name] = self._by_user.get(user_name, 0) + tokens

    def total(self, user_name: str) -> int:
        """Tokens booked for ``user_name`` by this process so far."""
        return self._by_user.get(user_name, 0)


@dataclass(frozen=True)
class QuotaReservation:
    """What a run may spend of the user's daily quota, read once before it starts.

    Attributes:
        remaining_tokens: Left today when read (tokens); None when the user has no limit.
        booked_before: :meth:`BookedTokens.total` of the user taken *before* the read, so a
            call booked while it was read is counted twice rather than missed.
    """

    remaining_tokens: int | None
    booked_before: int = 0

    def exhausted(self, used_by_run: int, booked_by_run: int, booked_now: int) -> bool:
        """Has the run reached what was left, counting the user's other runs since the read?

        Args:
            used_by_run: The run's tokens so far (input + output), booked or not.
            booked_by_run: Of those, tokens already booked (they are in ``booked_now`` too).
            booked_now: :meth:`BookedTokens.total` of the user now.
        """
        if self.remaining_tokens is None:
            return False
        others = max(0, booked_now - self.booked_before - booked_by_run)
        return used_by_run + others >= self.remaining_tokens


@dataclass(frozen=True)
class RunBilling:
    """What the pre-run check read and the run keeps: the model's price and the quota left.

    Attributes:
        price: The model's price; None when it has none and ``BILLING_ALLOW_UNPRICED=1``.
        quota: The run's reservation of the user's quota.
    """

    price: Price | None
    quota: QuotaReservation


def quota_status(
    engine: Engine, settings: Settings, user_name: str, *, at: datetime | None = None
) -> QuotaStatus:
    """The user's limit and today's usage against it.

    Args:
        engine: The relational store.
        settings: Supplies ``daily_token_limit`` (the default quota).
        user_name: Whose quota.
        at: The moment whose usage day counts (naive = UTC); default now.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The database cannot be read.
    """
    return _status(billing_store.quota_inputs(engine, user_name, usage_day(at)), settings)


def more_generous(first: int, second: int) -> bool:
    """True when daily limit ``first`` allows more tokens than ``second`` (tokens; 0 = unlimited)."""
    return first != second and (first == 0 or (second != 0 and first > second))


def _ceiling(inputs: billing_store.QuotaInputs, settings: Settings) -> int:
    if inputs.operator_limit is not None:
        return inputs.operator_limit
    default = settings.daily_token_limit
    # A row from before the operator's ceiling had its own column (migration 0015): a user could
    # only ever lower, so a stored limit above the default can only have been an operator's.
    if inputs.user_limit is not None and more_generous(inputs.user_limit, default):
        return inputs.user_limit
    return default


def _source(inputs: billing_store.QuotaInputs) -> Literal["operator", "user", "default"]:
    if inputs.user_limit is None:
        return "default"
    # An operator's limit is stored as the user's limit and as their ceiling (roles.set_quota).
    # A row from before migration 0015 has no ceiling column value and reads as the user's.
    return "operator" if inputs.user_limit == inputs.operator_limit else "user"


def _status(inputs: billing_store.QuotaInputs, settings: Settings) -> QuotaStatus:
    limit = inputs.user_limit if inputs.user_limit is not None else settings.daily_token_limit
    used = inputs.booked_tokens + inputs.pending_tokens
    remaining = max(0, limit - used) if limit > 0 else None
    return QuotaStatus(
        daily_token_limit=limit,
        source=_source(inputs),
        used_tokens=used,
        remaining_tokens=remaining,
        ceiling=_ceiling(inputs, settings),
    )


def set_user_quota(
    engine: Engine, user_name: str, daily_token_limit: int, *, ceiling: int | None = None
) -> None:
    """Set the user's daily token limit (tokens, input + output; 0 = unlimited).

    Args:
        engine: The relational store.
        user_name: Whose limit.
        daily_token_limit: The limit in force from the user's next run on.
        ceiling: An operator's ceiling to store with it (the most the user may set later), or
            None to keep the stored one (a user's own change).

    Raises:
        ValueError: The limit is negative or larger than ``MAX_DAILY_TOKEN_LIMIT``.
    """
    if not 0 <= daily_token_limit <= MAX_DAILY_TOKEN_LIMIT:
        raise ValueError(f"daily_token_limit must be between 0 and {MAX_DAILY_TOKEN_LIMIT}")
    billing_store.set_quota(engine, user_name, daily_token_limit, operator_limit=ceiling)


def remaining_tokens(engine: Engine, settings: Settings, user_name: str) -> int | None:
    """Tokens the user may still use today (for the check between model calls).

    Returns:
        Remaining tokens (0 when exhausted), or None when the user has no limit.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The database cannot be read.
    """
    return quota_status(engine, settings, user_name).remaining_tokens


def precheck(
    engine: Engine, settings: Settings, user_name: str, model: str | None = None, *, booked_before: int = 0
) -> RunBilling:
    """Refuse a run that could not be billed or would exceed the user's quota. Blocking: use a thread.

    Args:
        engine: The relational store.
        settings: Supplies ``model_name``, ``billing_allow_unpriced`` and ``daily_token_limit``.
        user_name: Who asks for the run.
        model: The model the run will be billed under (a route's, ``MODELS``); default ``MODEL_NAME``.
        booked_before: :meth:`BookedTokens.total` of the user, taken before this call.

    Returns:
        The price and the quota reservation the run keeps (no further reads while it streams).

    Raises:
        BillingRejected: 503 ``model_unpriced`` (the model has no price and
            ``BILLING_ALLOW_UNPRICED=0``) or 429 ``quota`` (today's tokens reached the limit;
            ``retry_after`` = seconds to the 00:00 Asia/Shanghai reset; :func:`quota_refusal`).
        sqlalchemy.exc.SQLAlchemyError: The database cannot be read.
    """
    model = model or settings.model_name
    billing, status = read_billing(engine, settings, user_name, model, booked_before=booked_before)
    if billing.price is None and not settings.billing_allow_unpriced:
        raise BillingRejected.by_key(503, "model_unpriced", "refusal.model_unpriced", model=model)
    if status.exhausted:
        raise quota_refusal(status)
    return billing


RAISABLE_QUOTA_KEYS = ("refusal.quota_raisable", "refusal.quota_raisable_unlimited")
"""The quota refusals that say the user may raise their own limit (to ``ceiling``; unlimited)."""


def quota_refusal(status: QuotaStatus) -> BillingRejected:
    """The 429 ``quota`` refusal of a user whose limit is used up today.

    Its sentence says who can help: below the ceiling (the user lowered their own limit) the user
    can raise it on the usage page (``refusal.quota_raisable``, with ``ceiling``; ``…_unlimited``
    when there is none); at the ceiling only an operator (``refusal.quota``).

    Args:
        status: The user's quota today (exhausted).

    Returns:
        The refusal to raise (``retry_after``: seconds until the 00:00 Asia/Shanghai reset).
    """
    key = "refusal.quota"
    if more_generous(status.ceiling, status.daily_token_limit):
        key = RAISABLE_QUOTA_KEYS[0] if status.ceiling else RAISABLE_QUOTA_KEYS[1]
    return BillingRejected.by_key(
        429,
        "quota",
        key,
        retry_after=seconds_until_reset(),
        used=status.used_tokens,
        limit=status.daily_token_limit,
        tz=USAGE_TZ_NAME,
        **({"ceiling": status.ceiling} if key != "refusal.quota" else {}),
    )


@functools.cache  # the catalogue does not change while the process runs
def _sentence_pattern(key: str) -> re.Pattern[str]:
    """``key``'s English sentence as a pattern reading its placeholders back (numbers as digits)."""
    return template_pattern(t(key, "en"), value=r"\d[\d,]*", values=(("tz", r"\S+?"),))


def raisable_quota(message: str) -> tuple[str, dict[str, object]] | None:
    """A quota refusal's English sentence (the ``message`` clients and the UI keep) read back, when it
    says the user may raise their own limit; None for any other sentence.

    Args:
        message: The refusal's English sentence, as :func:`quota_refusal` worded it.

    Returns:
        ``(catalogue id, params)`` to word it in another language, e.g.
        ``("refusal.quota_raisable", {"used": 100, "limit": 100, "tz": "Asia/Shanghai", "ceiling": 1000})``.
    """
    for key in RAISABLE_QUOTA_KEYS:
        if found := _sentence_pattern(key).fullmatch(message.strip()):
            return key, {
                name: value if name == "tz" else int(value.replace(",", ""))
                for name, value in found.groupdict().items()
            }
    return None


def read_billing(
    engine: Engine, settings: Settings, user_name: str, model: str, *, booked_before: int = 0
) -> tuple[RunBilling, QuotaStatus]:
    """The model's price, the user's quota reservation and status today: one read, no refusal.

    Args:
        engine: The relational store.
        settings: Supplies ``daily_token_limit``.
        user_name: Whose quota.
        model: Whose price (None in the result when it has none).
        booked_before: :meth:`BookedTokens.total` of the user, taken before this call.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The database cannot be read.
    """
    inputs = billing_store.quota_inputs(engine, user_name, usage_day(), model)
    status = _status(inputs, settings)
    price = price_of(inputs.price) if inputs.price is not None else None
    return RunBilling(price=price, quota=QuotaReservation(status.remaining_tokens, booked_before)), status


def raisable_quota_words(message: str, lang: str = DEFAULT_LANG) -> tuple[str, str] | None:
    """A quota refusal that says the user may raise their own limit, for the person at the keyboard.

    Args:
        message: The refusal's English sentence (``refusal.quota_raisable*``, see
            :func:`quota_refusal`), as the chat or a schedule's run kept it.
        lang: The UI language.

    Returns:
        ``(plain sentence naming the usage page and the ceiling, the refusal's own sentence)`` in
        ``lang``; None for any other sentence (a quota at its ceiling: only an operator can help).
    """
    read = raisable_quota(message)
    if read is None:
        return None
    key, params = read
    ceiling = int(params.get("ceiling") or 0)
    plain = (
        t("error.quota_raisable", lang, ceiling=formats.number(ceiling, lang))
        if ceiling
        else t("error.quota_raisable_unlimited", lang)
    )
    return plain, t(key, lang, **BillingRejected.formatted(params, lang))
