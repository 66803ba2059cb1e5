"""Settlement: every provider token lands in the ledger exactly once (spec 002, "持久化结算")."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime

import pytest
import sqlalchemy as sa
from sqlmodel import Session, func, select

from tests.billing.conftest import WriteBreaker
from ventapp.billing import settlement
from ventapp.billing.pricing import set_price
from ventapp.billing.settlement import ledger_id, retry_pending, settle
from ventapp.billing.usage import CallUsage
from ventapp.db import billing_store
from ventapp.db.billing_models import BillingPending, UsageDaily, UsageLedger

CALLS = [
    CallUsage("msg-1", 1_000, 200, "provider"),
    CallUsage("msg-2", 1_500, 300, "provider", main_thread=False),
    CallUsage("call-3", 0, 50, "estimate"),
]


def _settle(
    engine: sa.Engine, run_id: str = "run-1", calls: list[CallUsage] = CALLS, **kw
) -> settlement.SettleResult:  # type: ignore[no-untyped-def]
    return settle(
        engine, run_id=run_id, session_id="s-1", user_name="alice", model="scripted-demo", calls=calls, **kw
    )


def _ledger(engine: sa.Engine) -> list[UsageLedger]:
    with Session(engine) as db:
        return list(db.exec(select(UsageLedger).order_by(UsageLedger.id)).all())


def _daily(engine: sa.Engine, user: str = "alice") -> list[UsageDaily]:
    with Session(engine) as db:
        return list(db.exec(select(UsageDaily).where(UsageDaily.user_name == user)).all())


def _pending_count(engine: sa.Engine) -> int:
    with Session(engine) as db:
        return db.exec(select(func.count()).select_from(BillingPending)).one()


def _assert_daily_matches_ledger(engine: sa.Engine) -> None:
    rows = _ledger(engine)
    [daily] = _daily(engine)
    assert daily.input_tokens == sum(row.input_tokens for row in rows)
    assert daily.output_tokens == sum(row.output_tokens for row in rows)
    assert daily.calls == len(rows)
    assert daily.estimate_input_tokens == sum(r.input_tokens for r in rows if r.source == "estimate")
    assert daily.estimate_output_tokens == sum(r.output_tokens for r in rows if r.source == "estimate")


def test_settle_writes_one_row_per_call_with_stable_ids(engine: sa.Engine) -> None:
    result = _settle(engine)

    assert result.status == "settled" and result.rows_written == 3 and result.rows_skipped == 0
    rows = _ledger(engine)
    assert sorted(row.id for row in rows) == ["run-1:call-3", "run-1:msg-1", "run-1:msg-2"]
    assert {row.source for row in rows} == {"provider", "estimate"}
    assert [row.main_thread for row in rows if row.call_key == "msg-2"] == [False]
    assert all(row.currency == "CNY" and row.priced for row in rows)
    assert result.input_tokens == 2_500 and result.output_tokens == 550


def test_settle_twice_books_one_set_of_rows(engine: sa.Engine) -> None:
    first = _settle(engine)
    second = _settle(engine)

    assert first.rows_written == 3
    assert second.status == "settled" and second.rows_written == 0 and second.rows_skipped == 3
    assert second.input_tokens == 0 and second.cost_micros == 0
    assert len(_ledger(engine)) == 3
    [daily] = _daily(engine)
    assert (daily.input_tokens, daily.output_tokens, daily.calls) == (2_500, 550, 3)


def test_settle_again_with_a_new_call_books_only_the_new_one(engine: sa.Engine) -> None:
    _settle(engine, calls=CALLS[:2])
    result = _settle(engine)

    assert result.rows_written == 1 and result.rows_skipped == 2
    assert len(_ledger(engine)) == 3
    _assert_daily_matches_ledger(engine)


def test_daily_total_equals_ledger_sum_over_many_runs(engine: sa.Engine) -> None:
    for index in range(7):
        calls = [
            CallUsage(f"m{index}-{n}", 100 * n + index, 10 * n, "provider" if n % 2 else "estimate")
            for n in range(4)
        ]
        _settle(engine, run_id=f"run-{index}", calls=calls)
    _settle(engine, run_id="run-3", calls=[CallUsage("m3-0", 3, 0, "estimate")])  # duplicate: ignored

    assert len(_ledger(engine)) == 28
    _assert_daily_matches_ledger(engine)


def test_cost_is_integer_micro_units_rounded_per_row(engine: sa.Engine) -> None:
    set_price(engine, "scripted-demo", 150_000, 600_000, "USD")
    _settle(engine, calls=[CallUsage("a", 1_234, 567, "provider"), CallUsage("b", 3, 0, "provider")])

    rows = {row.call_key: row for row in _ledger(engine)}
    # 1234 * 0.15 + 567 * 0.60 = 185.1 + 340.2 = 525.3 micro-USD -> 525; 3 * 0.15 = 0.45 -> 0
    assert rows["a"].cost_micros == 525 and rows["b"].cost_micros == 0
    assert all(isinstance(row.cost_micros, int) and row.currency == "USD" for row in rows.values())


def test_unpriced_model_is_booked_at_zero_and_marked(engine: sa.Engine) -> None:
    result = settle(engine, run_id="r", session_id="s", user_name="alice", model="mystery-model", calls=CALLS)

    assert result.status == "settled" and result.currency is None and result.cost_micros == 0
    rows = _ledger(engine)
    assert all(not row.priced and row.cost_micros == 0 and row.currency is None for row in rows)
    assert sum(row.input_tokens for row in rows) == 2_500  # the tokens are still counted


def test_no_calls_writes_nothing(engine: sa.Engine) -> None:
    result = _settle(engine, calls=[])
    assert result.status == "settled" and result.rows_written == 0
    assert _ledger(engine) == [] and _daily(engine) == []


def test_overlong_call_key_still_gets_a_stable_id() -> None:
    key = "x" * 400
    assert ledger_id("run", key) == ledger_id("run", key)
    assert len(ledger_id("run", key)) <= 255 and ledger_id("run", key) != ledger_id("run", key + "y")


def test_usage_day_is_the_shanghai_day_of_settlement(engine: sa.Engine) -> None:
    _settle(engine, run_id="late", at=datetime(2026, 3, 1, 15, 59, 59))  # 23:59:59 in Shanghai
    _settle(engine, run_id="early", at=datetime(2026, 3, 1, 16, 0, 0))  # 00:00 next day in Shanghai

    days = {row.run_id: row.usage_day for row in _ledger(engine)}
    assert days == {"late": date(2026, 3, 1), "early": date(2026, 3, 2)}
    assert sorted(d.usage_day for d in _daily(engine)) == [date(2026, 3, 1), date(2026, 3, 2)]


# --- failure, pending, retry ------------------------------------------------------------------


def test_failing_ledger_write_goes_to_pending_then_retry_books_exactly_once(
    engine: sa.Engine, breaker: WriteBreaker
) -> None:
    breaker.break_writes("usage_ledger")
    result = _settle(engine)

    assert result.status == "pending" and result.pending_id and breaker.failures == 1
    assert _ledger(engine) == [] and _daily(engine) == []
    [pending] = billing_store.list_pending(engine)
    assert (pending.run_id, pending.input_tokens, pending.output_tokens) == ("run-1", 2_500, 550)
    assert "disk is full" in pending.last_error

    failed = retry_pending(engine)  # still broken: kept, attempt counted
    assert (failed.settled, failed.failed, failed.remaining) == (0, 1, 1)
    assert billing_store.list_pending(engine)[0].attempts == 1

    breaker.heal()
    report = retry_pending(engine)
    assert (report.settled, report.failed, report.remaining) == (1, 0, 0)
    assert len(_ledger(engine)) == 3
    _assert_daily_matches_ledger(engine)

    again = retry_pending(engine)  # nothing left; a second pass changes nothing
    assert again.settled == 0 and len(_ledger(engine)) == 3
    assert _settle(engine).rows_written == 0  # a late duplicate finalisation neither
    _assert_daily_matches_ledger(engine)


def test_failing_daily_update_rolls_back_the_ledger_rows(engine: sa.Engine, breaker: WriteBreaker) -> None:
    _settle(engine, run_id="earlier", calls=[CallUsage("k", 10, 1, "provider")])  # the daily row exists
    breaker.break_writes("usage_daily")
    result = _settle(engine)

    assert result.status == "pending"
    assert [row.run_id for row in _ledger(engine)] == ["earlier"]  # the same transaction rolled back
    breaker.heal()
    assert retry_pending(engine).settled == 1
    _assert_daily_matches_ledger(engine)


def test_pending_settlement_of_a_run_booked_meanwhile_adds_nothing(
    engine: sa.Engine, breaker: WriteBreaker
) -> None:
    breaker.break_writes("usage_ledger")
    assert _settle(engine).status == "pending"
    breaker.heal()
    assert _settle(engine).rows_written == 3  # booked directly (a second finalisation, another process)

    report = retry_pending(engine)
    assert report.settled == 1 and _pending_count(engine) == 0
    assert len(_ledger(engine)) == 3
    _assert_daily_matches_ledger(engine)


def test_partly_booked_run_retried_books_only_the_missing_call(
    engine: sa.Engine, breaker: WriteBreaker
) -> None:
    _settle(engine, calls=CALLS[:2])
    breaker.break_writes("usage_ledger")
    assert _settle(engine).status == "pending"
    breaker.heal()

    assert retry_pending(engine).settled == 1
    assert len(_ledger(engine)) == 3
    _assert_daily_matches_ledger(engine)


def test_retry_keeps_the_original_usage_day(engine: sa.Engine, breaker: WriteBreaker) -> None:
    breaker.break_writes("usage_ledger")
    _settle(engine, at=datetime(2026, 3, 1, 15, 59, tzinfo=UTC))  # 23:59 Shanghai, 1 March
    breaker.heal()
    retry_pending(engine)  # runs "now", long after that midnight

    assert {row.usage_day for row in _ledger(engine)} == {date(2026, 3, 1)}
    assert [d.usage_day for d in _daily(engine)] == [date(2026, 3, 1)]


def test_unwritable_database_reports_failed_and_logs_figures(
    engine: sa.Engine, breaker: WriteBreaker, caplog: pytest.LogCaptureFixture
) -> None:
    breaker.break_writes("usage_ledger", "billing_pending")
    result = _settle(engine)

    assert result.status == "failed"
    assert "BILLING LOST" in caplog.text and "msg-1" in caplog.text


def test_corrupt_pending_row_is_kept_not_dropped(engine: sa.Engine) -> None:
    billing_store.add_pending(
        engine,
        BillingPending(
            run_id="bad",
            user_name="alice",
            model="scripted-demo",
            calls=[{"nope": 1}],
            usage_day=date(2026, 1, 1),
        ),
    )
    report = retry_pending(engine)
    assert (report.settled, report.failed, report.remaining) == (0, 1, 1)


async def test_pending_retry_loop_books_at_start_and_stops_on_cancel(
    engine: sa.Engine, breaker: WriteBreaker
) -> None:
    breaker.break_writes("usage_ledger")
    _settle(engine)
    breaker.heal()

    task = asyncio.create_task(settlement.pending_retry_loop(engine, interval_s=0.05))
    for _ in range(100):
        if _pending_count(engine) == 0:
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _pending_count(engine) == 0 and len(_ledger(engine)) == 3
