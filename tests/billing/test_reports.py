"""Read models: today split by source, the paged ledger, the 14-day series, billing health."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
import sqlalchemy as sa

from tests.billing.conftest import WriteBreaker, make_settings
from ventapp.billing import reports
from ventapp.billing.day import usage_day
from ventapp.billing.guard import set_user_quota
from ventapp.billing.pricing import set_price
from ventapp.billing.settlement import settle
from ventapp.billing.usage import CallUsage
from ventapp.config import Settings


def _settle(
    engine: sa.Engine, run_id: str, calls: list[CallUsage], model: str = "scripted-demo", **kw
) -> None:  # type: ignore[no-untyped-def]
    settle(engine, run_id=run_id, session_id="s", user_name="alice", model=model, calls=calls, **kw)


def test_today_splits_provider_and_estimate_tokens(engine: sa.Engine, settings: Settings) -> None:
    _settle(engine, "r1", [CallUsage("a", 1_000, 100, "provider"), CallUsage("b", 0, 40, "estimate")])
    _settle(engine, "r2", [CallUsage("c", 300, 0, "estimate")])

    body = reports.today_usage(engine, settings, "alice").public()

    assert (body["input_tokens"], body["output_tokens"], body["total_tokens"], body["calls"]) == (
        1_300,
        140,
        1_440,
        3,
    )
    assert body["by_source"] == {
        "provider": {"input_tokens": 1_000, "output_tokens": 100},
        "estimate": {"input_tokens": 300, "output_tokens": 40},
    }
    assert body["timezone"] == "Asia/Shanghai" and body["day"] == usage_day().isoformat()
    assert body["daily_token_limit"] == 0 and body["remaining_tokens"] is None


def test_today_cost_matches_ledger_and_groups_by_currency(engine: sa.Engine, settings: Settings) -> None:
    set_price(engine, "usd-model", 1_000_000, 2_000_000, "USD")
    _settle(engine, "r1", [CallUsage("a", 1_000_000, 0, "provider")])  # ¥0.1
    _settle(engine, "r2", [CallUsage("b", 0, 500_000, "provider")], model="usd-model")  # $1
    _settle(engine, "r3", [CallUsage("c", 10, 10, "provider")], model="unknown")  # unpriced, 0

    cost = {
        line["currency"]: line for line in reports.today_usage(engine, settings, "alice").public()["cost"]
    }

    assert cost["CNY"]["cost_micros"] == 100_000 and cost["CNY"]["display"] == "¥0.1"
    assert cost["USD"]["cost_micros"] == 1_000_000 and cost["USD"]["display"] == "$1"
    assert cost[None]["cost_micros"] == 0 and cost[None]["calls"] == 1


def test_today_shows_quota_and_pending_tokens(engine: sa.Engine, breaker: WriteBreaker) -> None:
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="5000")
    _settle(engine, "r1", [CallUsage("a", 1_000, 0, "provider")])
    breaker.break_writes("usage_ledger")
    _settle(engine, "r2", [CallUsage("b", 500, 500, "provider")])
    breaker.heal()

    body = reports.today_usage(engine, settings, "alice").public()

    assert body["input_tokens"] == 1_000  # booked only
    assert (body["pending_settlements"], body["pending_tokens"]) == (1, 1_000)
    assert body["used_tokens"] == 2_000 and body["remaining_tokens"] == 3_000
    assert body["quota_source"] == "default"
    set_user_quota(engine, "alice", 0)
    body = reports.today_usage(engine, settings, "alice").public()
    assert body["quota_source"] == "user" and body["remaining_tokens"] is None


def test_recent_is_newest_first_and_paged(engine: sa.Engine) -> None:
    start = datetime(2026, 5, 1, 2, 0)
    for index in range(5):
        _settle(
            engine,
            f"run-{index}",
            [CallUsage("k", index, 0, "provider")],
            at=start + timedelta(minutes=index),
        )

    first = reports.recent_usage(engine, "alice", limit=2, offset=0)
    second = reports.recent_usage(engine, "alice", limit=2, offset=2)

    assert first["total"] == 5 and (first["limit"], first["offset"]) == (2, 0)
    assert [item["run_id"] for item in first["items"]] == ["run-4", "run-3"]
    assert [item["run_id"] for item in second["items"]] == ["run-2", "run-1"]
    item = first["items"][0]
    assert item["id"] == "run-4:k" and item["source"] == "provider" and item["model"] == "scripted-demo"
    assert reports.recent_usage(engine, "bob")["items"] == []
    with pytest.raises(ValueError):
        reports.recent_usage(engine, "alice", limit=0)


def test_daily_series_covers_14_days_with_zeros(engine: sa.Engine) -> None:
    now = datetime(2026, 5, 14, 4, 0)  # noon in Shanghai
    _settle(engine, "today", [CallUsage("k", 100, 10, "provider")], at=now)
    _settle(engine, "ago", [CallUsage("k", 7, 3, "estimate")], at=now - timedelta(days=13))
    _settle(engine, "too-old", [CallUsage("k", 999, 9, "provider")], at=now - timedelta(days=14))

    series = reports.daily_series(engine, "alice", days=14, at=now)

    assert series[0].day == date(2026, 5, 1) and series[-1].day == date(2026, 5, 14)
    assert len(series) == 14
    assert (series[-1].input_tokens, series[-1].output_tokens) == (100, 10)
    assert (series[0].input_tokens, series[0].estimate_tokens) == (7, 10)
    assert sum(d.input_tokens for d in series[1:-1]) == 0


def test_run_usage_names_its_owner(engine: sa.Engine) -> None:
    _settle(engine, "r1", [CallUsage("a", 1, 1, "provider")])
    assert reports.run_usage(engine, "r1")[0] == "alice"
    assert reports.run_usage(engine, "nope") == (None, [])


def test_billing_health_statuses(engine: sa.Engine, breaker: WriteBreaker) -> None:
    ok = reports.billing_health(engine, make_settings())
    assert (ok["status"], ok["priced"], ok["pending_settlements"]) == ("ok", True, 0)
    assert ok["price"]["model"] == "scripted-demo"

    refused = reports.billing_health(engine, make_settings(MODEL_NAME="nobody-priced-me"))
    assert (refused["status"], refused["priced"], refused["price"]) == ("error", False, None)
    allowed = reports.billing_health(engine, make_settings(MODEL_NAME="x", BILLING_ALLOW_UNPRICED="1"))
    assert allowed["status"] == "degraded" and allowed["allow_unpriced"] is True

    breaker.break_writes("usage_ledger")
    _settle(engine, "r", [CallUsage("a", 1, 1, "provider")])
    pending = reports.billing_health(engine, make_settings())
    assert pending["status"] == "degraded" and pending["pending_settlements"] == 1
    assert pending["oldest_pending_at"] is not None
