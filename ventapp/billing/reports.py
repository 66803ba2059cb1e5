"""Read models of usage for the API and the usage page: today, the ledger, the last days, health.

Every figure says where it came from: tokens are split into ``provider`` (reported
by the model provider) and ``estimate`` (offline count when the provider gave
none, invariant 3), and tokens of settlements still pending are shown apart, so
a failed write never reads as zero. All functions are blocking: use a thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy.engine import Engine

from ventapp.billing.day import USAGE_TZ_NAME, next_reset, usage_day
from ventapp.billing.guard import quota_status
from ventapp.billing.pricing import format_money, get_price
from ventapp.config import Settings
from ventapp.db import billing_store
from ventapp.db.billing_models import UsageLedger
from ventapp.db.models import iso_utc

MAX_PAGE = 200
"""Most ledger rows one ``recent`` page returns."""


@dataclass(frozen=True)
class CostLine:
    """Cost in one currency: ``cost_micros`` micro-units over ``calls`` calls (currency None = unpriced)."""

    currency: str | None
    cost_micros: int
    calls: int

    def public(self) -> dict[str, Any]:
        """JSON shape, with a readable ``display`` such as ``"¥0.0123"``."""
        return {
            "currency": self.currency,
            "cost_micros": self.cost_micros,
            "calls": self.calls,
            "display": format_money(self.cost_micros, self.currency),
        }


@dataclass(frozen=True)
class TodayUsage:
    """A user's usage on the current Asia/Shanghai day, against their quota. Tokens throughout."""

    user_name: str
    day: date
    resets_at: datetime
    input_tokens: int
    output_tokens: int
    calls: int
    provider_input_tokens: int
    provider_output_tokens: int
    estimate_input_tokens: int
    estimate_output_tokens: int
    costs: list[CostLine]
    daily_token_limit: int
    quota_source: str
    used_tokens: int
    remaining_tokens: int | None
    pending_settlements: int
    pending_tokens: int
    quota_ceiling: int = 0

    @property
    def total_tokens(self) -> int:
        """Booked input + output tokens (pending ones excluded)."""
        return self.input_tokens + self.output_tokens

    def public(self) -> dict[str, Any]:
        """The JSON body of ``GET /api/usage/today``."""
        return {
            "user_name": self.user_name,
            "day": self.day.isoformat(),
            "timezone": USAGE_TZ_NAME,
            "resets_at": iso_utc(self.resets_at),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "calls": self.calls,
            "by_source": {
                "provider": {
                    "input_tokens": self.provider_input_tokens,
                    "output_tokens": self.provider_output_tokens,
                },
                "estimate": {
                    "input_tokens": self.estimate_input_tokens,
                    "output_tokens": self.estimate_output_tokens,
                },
            },
            "cost": [line.public() for line in self.costs],
            "daily_token_limit": self.daily_token_limit,
            "quota_source": self.quota_source,
            "used_tokens": self.used_tokens,
            "remaining_tokens": self.remaining_tokens,
            # The ceiling the usage page shows ("不限" when none): None, like remaining_tokens, when unlimited.
            "max_daily_token_limit": self.quota_ceiling or None,
            "pending_settlements": self.pending_settlements,
            "pending_tokens": self.pending_tokens,
        }


def today_usage(
    engine: Engine, settings: Settings, user_name: str, *, at: datetime | None = None, operator: bool = False
) -> TodayUsage:
    """The user's figures for the usage day of ``at`` (default now).

    ``operator``: the user is an operator, who may set any limit (no ceiling: ``quota_ceiling`` 0,
    ``max_daily_token_limit`` null), whatever ``TFAGENTS_DAILY_TOKEN_LIMIT`` says.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The database cannot be read.
    """
    day = usage_day(at)
    daily = billing_store.get_daily(engine, user_name, day)
    input_tokens = daily.input_tokens if daily else 0
    output_tokens = daily.output_tokens if daily else 0
    estimate_input = daily.estimate_input_tokens if daily else 0
    estimate_output = daily.estimate_output_tokens if daily else 0
    quota = quota_status(engine, settings, user_name, at=at)
    pending_count, pending_tokens = billing_store.pending_for_user(engine, user_name, day)
    return TodayUsage(
        user_name=user_name,
        day=day,
        resets_at=next_reset(at),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        calls=daily.calls if daily else 0,
        provider_input_tokens=input_tokens - estimate_input,
        provider_output_tokens=output_tokens - estimate_output,
        estimate_input_tokens=estimate_input,
        estimate_output_tokens=estimate_output,
        costs=[CostLine(*line) for line in billing_store.ledger_costs(engine, user_name, day)],
        daily_token_limit=quota.daily_token_limit,
        quota_source=quota.source,
        used_tokens=quota.used_tokens,
        remaining_tokens=quota.remaining_tokens,
        pending_settlements=pending_count,
        pending_tokens=pending_tokens,
        quota_ceiling=0 if operator else quota.ceiling,
    )


def ledger_entry(row: UsageLedger) -> dict[str, Any]:
    """One ledger row as JSON; ``created_at`` as :func:`~ventapp.db.models.iso_utc` writes it."""
    return {
        "id": row.id,
        "run_id": row.run_id,
        "session_id": row.session_id,
        "model": row.model,
        "call_key": row.call_key,
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "source": row.source,
        "main_thread": row.main_thread,
        "cost_micros": row.cost_micros,
        "currency": row.currency,
        "cost": format_money(row.cost_micros, row.currency),
        "priced": row.priced,
        "usage_day": row.usage_day.isoformat(),
        "created_at": iso_utc(row.created_at),
    }


def recent_usage(engine: Engine, user_name: str, *, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """One page of the user's ledger, newest first: ``{items, total, limit, offset}``.

    Raises:
        ValueError: ``limit`` outside 1–``MAX_PAGE`` or ``offset`` negative.
    """
    if not 1 <= limit <= MAX_PAGE or offset < 0:
        raise ValueError(f"limit must be 1–{MAX_PAGE} and offset ≥ 0")
    rows = billing_store.list_ledger(engine, user_name, limit, offset)
    return {
        "items": [ledger_entry(row) for row in rows],
        "total": billing_store.count_ledger(engine, user_name),
        "limit": limit,
        "offset": offset,
    }


def run_usage(engine: Engine, run_id: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The ledger rows of one run: ``(owner user_name or None if none, entries)``."""
    rows = billing_store.ledger_for_run(engine, run_id)
    return (rows[0].user_name if rows else None), [ledger_entry(row) for row in rows]


@dataclass(frozen=True)
class DayTotal:
    """One day of the chart: booked tokens, and how many of them were estimates."""

    day: date
    input_tokens: int
    output_tokens: int
    estimate_tokens: int


def daily_series(
    engine: Engine, user_name: str, *, days: int = 14, at: datetime | None = None
) -> list[DayTotal]:
    """The last ``days`` usage days up to today (Asia/Shanghai), oldest first, empty days as zeros."""
    today = usage_day(at)
    start = today - timedelta(days=days - 1)
    booked = {row.usage_day: row for row in billing_store.list_daily(engine, user_name, start)}
    series: list[DayTotal] = []
    for offset in range(days):
        day = start + timedelta(days=offset)
        row = booked.get(day)
        series.append(
            DayTotal(
                day=day,
                input_tokens=row.input_tokens if row else 0,
                output_tokens=row.output_tokens if row else 0,
                estimate_tokens=(row.estimate_input_tokens + row.estimate_output_tokens) if row else 0,
            )
        )
    return series


def billing_health(engine: Engine, settings: Settings) -> dict[str, Any]:
    """The body of ``GET /api/health/billing``.

    ``status`` is ``ok``; ``degraded`` when settlements are pending or the model is
    unpriced but allowed (billed at zero); ``error`` when the model is unpriced and
    runs are therefore refused.
    """
    price = get_price(engine, settings.model_name)
    pending, oldest = billing_store.pending_summary(engine)
    if price is None and not settings.billing_allow_unpriced:
        status = "error"
    elif price is None or pending:
        status = "degraded"
    else:
        status = "ok"
    return {
        "status": status,
        "model": settings.model_name,
        "priced": price is not None,
        "price": price.public() if price else None,
        "allow_unpriced": settings.billing_allow_unpriced,
        "pending_settlements": pending,
        "oldest_pending_at": iso_utc(oldest),
        "timezone": USAGE_TZ_NAME,
    }


def every_user_today(engine: Engine, settings: Settings, *, at: datetime | None = None) -> dict[str, Any]:
    """Today's usage of every user who used the model today (operators' overview).

    Returns:
        ``{day, items: [{user_name, input_tokens, output_tokens, total_tokens, calls,
        daily_token_limit, quota_source, remaining_tokens}]}``, most tokens first.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The database cannot be read.
    """
    day = usage_day(at)
    items = []
    for row in billing_store.daily_of_every_user(engine, day):
        quota = quota_status(engine, settings, row.user_name, at=at)
        items.append(
            {
                "user_name": row.user_name,
                "input_tokens": row.input_tokens,
                "output_tokens": row.output_tokens,
                "total_tokens": row.input_tokens + row.output_tokens,
                "calls": row.calls,
                "daily_token_limit": quota.daily_token_limit,
                "quota_source": quota.source,
                "remaining_tokens": quota.remaining_tokens,
            }
        )
    return {"day": day.isoformat(), "items": items}
