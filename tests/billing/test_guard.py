"""The pre-run guard: unpriced models refused (fail-closed), daily quotas enforced with 429."""

from __future__ import annotations

from datetime import date, datetime

import pytest
import sqlalchemy as sa

from tests.billing.conftest import WriteBreaker, make_settings
from ventapp.billing import guard
from ventapp.billing.day import usage_day
from ventapp.billing.guard import BillingRejected, precheck, quota_status, remaining_tokens, set_user_quota
from ventapp.billing.settlement import settle
from ventapp.billing.usage import CallUsage
from ventapp.config import Settings


def _use(engine: sa.Engine, user: str, tokens_in: int, tokens_out: int, run_id: str = "r1") -> None:
    settle(
        engine,
        run_id=run_id,
        session_id="s",
        user_name=user,
        model="scripted-demo",
        calls=[CallUsage("c1", tokens_in, tokens_out, "provider")],
    )


def test_unpriced_model_is_refused_with_503_naming_model_and_fix(engine: sa.Engine) -> None:
    settings = make_settings(MODEL_NAME="brand-new-model")

    with pytest.raises(BillingRejected) as caught:
        precheck(engine, settings, "alice")

    exc = caught.value
    assert (exc.status, exc.code, exc.retry_after) == (503, "model_unpriced", None)
    assert "brand-new-model" in exc.message
    assert "BILLING_ALLOW_UNPRICED=1" in exc.message and "set-price" in exc.message


def test_unpriced_model_allowed_with_flag_and_billed_at_zero(engine: sa.Engine) -> None:
    settings = make_settings(MODEL_NAME="brand-new-model", BILLING_ALLOW_UNPRICED="1")

    precheck(engine, settings, "alice")  # no exception
    result = settle(
        engine,
        run_id="r",
        session_id="s",
        user_name="alice",
        model=settings.model_name,
        calls=[CallUsage("c", 500, 50, "provider")],
    )
    assert result.cost_micros == 0 and result.currency is None and result.input_tokens == 500


def test_priced_model_passes_without_quota(engine: sa.Engine, settings: Settings) -> None:
    _use(engine, "alice", 10_000_000, 0)
    precheck(engine, settings, "alice")
    assert remaining_tokens(engine, settings, "alice") is None


def test_over_default_quota_is_refused_with_429_and_retry_after(engine: sa.Engine) -> None:
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    _use(engine, "alice", 900, 100)

    with pytest.raises(BillingRejected) as caught:
        precheck(engine, settings, "alice")

    exc = caught.value
    assert (exc.status, exc.code) == (429, "quota")
    assert "1,000 of your daily quota of 1,000" in exc.message and "Asia/Shanghai" in exc.message
    assert "an operator can raise" in exc.message, (
        "above their ceiling, only an operator raises a quota (issue 15)"
    )
    assert exc.retry_after is not None and 1 <= exc.retry_after <= 24 * 3600
    precheck(engine, settings, "bob")  # other users are not affected


def test_under_quota_passes_and_remaining_counts_input_plus_output(engine: sa.Engine) -> None:
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    _use(engine, "alice", 600, 150)

    precheck(engine, settings, "alice")
    assert remaining_tokens(engine, settings, "alice") == 250


def test_user_quota_overrides_default_and_zero_means_unlimited(engine: sa.Engine) -> None:
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    _use(engine, "alice", 5_000, 0)

    set_user_quota(engine, "alice", 0)
    precheck(engine, settings, "alice")
    assert quota_status(engine, settings, "alice").source == "user"

    set_user_quota(engine, "alice", 10_000)
    assert remaining_tokens(engine, settings, "alice") == 5_000

    set_user_quota(engine, "alice", 4_000)
    with pytest.raises(BillingRejected):
        precheck(engine, settings, "alice")


def test_default_quota_source_when_user_never_set_one(engine: sa.Engine) -> None:
    status = quota_status(engine, make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="77"), "carol")
    assert (status.daily_token_limit, status.source, status.used_tokens, status.remaining_tokens) == (
        77,
        "default",
        0,
        77,
    )


def test_negative_or_huge_quota_is_a_value_error(engine: sa.Engine) -> None:
    with pytest.raises(ValueError):
        set_user_quota(engine, "alice", -1)
    with pytest.raises(ValueError):
        set_user_quota(engine, "alice", guard.MAX_DAILY_TOKEN_LIMIT + 1)


def test_pending_settlements_count_against_the_quota(engine: sa.Engine, breaker: WriteBreaker) -> None:
    """A failed write must not make the quota read zero."""
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    breaker.break_writes("usage_ledger")
    _use(engine, "alice", 800, 200)
    breaker.heal()

    assert remaining_tokens(engine, settings, "alice") == 0
    with pytest.raises(BillingRejected):
        precheck(engine, settings, "alice")


def test_yesterdays_usage_does_not_count_today(engine: sa.Engine) -> None:
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    settle(
        engine,
        run_id="old",
        session_id="s",
        user_name="alice",
        model="scripted-demo",
        calls=[CallUsage("c", 5_000, 0, "provider")],
        at=datetime(2020, 1, 1, 12, 0),
    )
    assert usage_day() != date(2020, 1, 1)
    assert remaining_tokens(engine, settings, "alice") == 1000


def test_precheck_hands_over_the_price_and_what_is_left(engine: sa.Engine) -> None:
    """The run keeps both: no price or quota read while it streams (issue 18)."""
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    _use(engine, "alice", 300, 100)
    billing = precheck(engine, settings, "alice", booked_before=42)
    assert billing.price is not None and billing.price.model == "scripted-demo"
    assert billing.quota == guard.QuotaReservation(remaining_tokens=600, booked_before=42)
    unlimited = precheck(engine, make_settings(), "bob")
    assert unlimited.quota.remaining_tokens is None and not unlimited.quota.exhausted(10**9, 0, 0)


def test_reservation_counts_the_run_and_what_other_runs_booked_since() -> None:
    reservation = guard.QuotaReservation(remaining_tokens=1000, booked_before=5_000)
    # The run used 600 (400 of them booked already); others booked nothing since the read.
    assert not reservation.exhausted(used_by_run=600, booked_by_run=400, booked_now=5_400)
    # Another run of the user booked 400 since: 600 + 400 reaches what was left.
    assert reservation.exhausted(used_by_run=600, booked_by_run=400, booked_now=5_800)
    assert reservation.exhausted(used_by_run=1000, booked_by_run=0, booked_now=5_000)


def test_booked_tokens_are_kept_per_user() -> None:
    booked = guard.BookedTokens()
    booked.add("alice", 10)
    booked.add("alice", 5)
    booked.add("bob", 1)
    assert (booked.total("alice"), booked.total("bob"), booked.total("carol")) == (15, 1, 0)


def test_precheck_reads_the_users_day_and_model_in_one_statement(
    engine: sa.Engine, breaker: WriteBreaker
) -> None:
    """Booked and pending tokens, the user's own limit and the model's price come from one SELECT
    (issue 18), and only the asking user's rows of today and the asked model's price count."""
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="100000")
    set_user_quota(engine, "alice", 5_000)
    set_user_quota(engine, "bob", 1)
    _use(engine, "alice", 1_000, 200)  # booked today
    _use(engine, "bob", 9_000, 0, run_id="rb")  # another user's day
    breaker.break_writes("usage_ledger")
    _use(engine, "alice", 300, 100, run_id="r2")  # pending today
    breaker.heal()
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        billing, status = guard.read_billing(engine, settings, "alice", "scripted-demo", booked_before=7)
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    assert len(statements) == 1
    assert (status.source, status.daily_token_limit, status.used_tokens) == ("user", 5_000, 1_600)
    assert billing.quota == guard.QuotaReservation(remaining_tokens=3_400, booked_before=7)
    assert billing.price is not None and billing.price.model == "scripted-demo"
    unknown, _ = guard.read_billing(engine, settings, "carol", "no-such-model")
    assert unknown.price is None and unknown.quota.remaining_tokens == 100_000
