"""Storage of prices, the usage ledger, daily totals, quotas and pending settlements. Access only.

Business rules (what a call costs, which day it belongs to, whether a run may
start) live in ``ventapp.billing``; this module reads and writes rows. Every
function is synchronous and is one transaction: async callers use
``asyncio.to_thread``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from ventapp.db.billing_models import (
    BillingPending,
    ModelPrice,
    UsageDaily,
    UsageLedger,
    UserQuota,
)
from ventapp.db.models import utcnow

# --- prices ------------------------------------------------------------------------------


_PRICES = ModelPrice.__table__


class PriceRow(NamedTuple):
    """A model's stored price, read for a settlement or a pre-run check (the ``model_prices`` columns).

    A tuple, not a :class:`ModelPrice`: both are read on every turn (issue 18), and building the
    SQLModel instance (validation, instrumentation) cost several times the ``SELECT`` itself.
    """

    model: str
    input_micros_per_mtok: int
    output_micros_per_mtok: int
    currency: str


_PRICE_OF = sa.select(
    _PRICES.c.model, _PRICES.c.input_micros_per_mtok, _PRICES.c.output_micros_per_mtok, _PRICES.c.currency
).where(_PRICES.c.model == sa.bindparam("p_model"))


def get_price(engine: Engine, model: str) -> PriceRow | None:
    """The price of ``model`` (exact name), or None.

    A Core read (issue 18): every settlement and every new agent reads a price.
    """
    with engine.connect() as connection:
        return price_in(connection, model)


def price_in(connection: sa.Connection, model: str) -> PriceRow | None:
    """:func:`get_price` on an open connection (inside a caller's transaction)."""
    row = connection.execute(_PRICE_OF, {"p_model": model}).first()
    return PriceRow(*row) if row is not None else None


def list_prices(engine: Engine) -> Sequence[ModelPrice]:
    """Every price row, by model name."""
    with Session(engine) as db:
        return db.exec(select(ModelPrice).order_by(col(ModelPrice.model))).all()


def insert_prices_if_missing(engine: Engine, prices: Iterable[ModelPrice]) -> int:
    """Insert the prices whose model has no row yet; existing rows are never touched.

    Returns:
        How many rows were inserted.
    """
    with Session(engine) as db:
        existing = set(db.exec(select(ModelPrice.model)).all())
        added = 0
        for price in prices:
            if price.model not in existing:
                db.add(price)
                existing.add(price.model)
                added += 1
        db.commit()
        return added


def upsert_price(engine: Engine, model: str, input_micros: int, output_micros: int, currency: str) -> None:
    """Set a model's price per million tokens (micro-units of ``currency``), replacing any old one."""
    with Session(engine) as db:
        row = db.get(ModelPrice, model) or ModelPrice(
            model=model, input_micros_per_mtok=0, output_micros_per_mtok=0
        )
        row.input_micros_per_mtok = input_micros
        row.output_micros_per_mtok = output_micros
        row.currency = currency
        row.updated_at = utcnow()
        db.add(row)
        db.commit()


# --- quotas ------------------------------------------------------------------------------


def get_quota(engine: Engine, user_name: str) -> UserQuota | None:
    """The user's own quota row, or None (the configured default applies)."""
    with Session(engine) as db:
        return db.get(UserQuota, user_name)


def set_quota(
    engine: Engine, user_name: str, daily_token_limit: int, *, operator_limit: int | None = None
) -> None:
    """Store the user's daily token limit (tokens; 0 = unlimited).

    ``operator_limit``: the ceiling an operator sets (tokens; 0 = unlimited) — stored when given,
    else the one stored stays (a user's own change never moves it).
    """
    with Session(engine) as db:
        row = db.get(UserQuota, user_name) or UserQuota(user_name=user_name)
        row.daily_token_limit = daily_token_limit
        if operator_limit is not None:
            row.operator_limit = operator_limit
        row.updated_at = utcnow()
        db.add(row)
        db.commit()


@dataclass(frozen=True)
class QuotaInputs:
    """What the pre-run check reads, in one statement (see :func:`quota_inputs`).

    Attributes:
        user_limit: The user's own daily token limit, or None (the configured default applies).
        operator_limit: The ceiling an operator set, or None (none set, or a row from before 0015).
        booked_tokens: Input + output tokens in the user's daily total of the day (0 if none).
        pending_tokens: Input + output tokens of the user's pending settlements of the day.
        price: The model's price row when a model was asked for and it has one, else None.
    """

    user_limit: int | None
    booked_tokens: int
    pending_tokens: int
    price: PriceRow | None
    operator_limit: int | None = None


def _quota_columns() -> list[sa.ScalarSelect[object]]:
    user = UserQuota.__table__.c
    daily = UsageDaily.__table__.c
    pending = BillingPending.__table__.c
    name, day = sa.bindparam("p_user"), sa.bindparam("p_day", type_=sa.Date)
    return [
        sa.select(user.daily_token_limit).where(user.user_name == name).scalar_subquery(),
        sa.select(user.operator_limit).where(user.user_name == name).scalar_subquery(),
        sa.select(daily.input_tokens + daily.output_tokens)
        .where(daily.user_name == name, daily.usage_day == day)
        .scalar_subquery(),
        sa.select(sa.func.coalesce(sa.func.sum(pending.input_tokens + pending.output_tokens), 0))
        .where(pending.user_name == name, pending.usage_day == day)
        .scalar_subquery(),
    ]


# Built once with bound parameters (issue 18): building the statement cost as much CPU as running it.
_QUOTA_INPUTS = sa.select(*_quota_columns())
_QUOTA_INPUTS_AND_PRICE = sa.select(
    *_quota_columns(),
    *(
        sa.select(column).where(_PRICES.c.model == sa.bindparam("p_model")).scalar_subquery()
        for column in (_PRICES.c.input_micros_per_mtok, _PRICES.c.output_micros_per_mtok, _PRICES.c.currency)
    ),
)


def quota_inputs(engine: Engine, user_name: str, day: date, model: str | None = None) -> QuotaInputs:
    """The user's own limit, the day's booked and pending tokens and ``model``'s price: one statement.

    One connection checkout and one round trip instead of four sessions (issue 18: the pre-run
    check is on every turn's path to its first token, in a worker thread holding the GIL).
    """
    with engine.connect() as connection:
        if model is None:
            row = connection.execute(_QUOTA_INPUTS, {"p_user": user_name, "p_day": day}).one()
        else:
            params = {"p_user": user_name, "p_day": day, "p_model": model}
            row = connection.execute(_QUOTA_INPUTS_AND_PRICE, params).one()
    price = None
    if model is not None and row[4] is not None:
        price = PriceRow(model, row[4], row[5], row[6])
    return QuotaInputs(
        user_limit=row[0],
        operator_limit=row[1],
        booked_tokens=int(row[2] or 0),
        pending_tokens=int(row[3] or 0),
        price=price,
    )


# --- ledger and daily totals -------------------------------------------------------------


# A settlement is on every turn's way to its closing frame: Core statements built once (issue 18).
_LEDGER = UsageLedger.__table__
_DAILY = UsageDaily.__table__
_LEDGER_IDS = sa.select(_LEDGER.c.id).where(_LEDGER.c.id.in_(sa.bindparam("p_ids", expanding=True)))
_ADD_TO_DAILY = (
    sa.update(_DAILY)
    .where(_DAILY.c.user_name == sa.bindparam("p_user"), _DAILY.c.usage_day == sa.bindparam("p_day"))
    .values(
        # An SQL increment, not read-modify-write: two settlements on other connections cannot lose one.
        input_tokens=_DAILY.c.input_tokens + sa.bindparam("p_input", type_=sa.BigInteger),
        output_tokens=_DAILY.c.output_tokens + sa.bindparam("p_output", type_=sa.BigInteger),
        estimate_input_tokens=_DAILY.c.estimate_input_tokens
        + sa.bindparam("p_est_input", type_=sa.BigInteger),
        estimate_output_tokens=_DAILY.c.estimate_output_tokens
        + sa.bindparam("p_est_output", type_=sa.BigInteger),
        calls=_DAILY.c.calls + sa.bindparam("p_calls", type_=sa.Integer),
        updated_at=sa.bindparam("p_at"),
    )
)
_DELETE_PENDING = sa.delete(BillingPending.__table__).where(
    BillingPending.__table__.c.id == sa.bindparam("p_pending")
)


def write_settlement_in(
    connection: sa.Connection,
    rows: Sequence[UsageLedger],
    *,
    user_name: str,
    day: date,
    pending_id: str | None = None,
) -> list[UsageLedger]:
    """Insert the ledger rows not yet present and add exactly those to the day's total.

    In the caller's transaction, which commits or rolls back the lot (the settlement's own, or
    the run's final save, issue 18).

    Rows whose ``id`` already exists are skipped, so writing the same settlement
    twice changes nothing. When ``pending_id`` is given that ``billing_pending`` row
    is deleted in the same transaction.

    Args:
        rows: Ledger rows with ids, tokens and cost already set (not added to any session).
        user_name: Owner of the daily total to increase.
        day: The usage day of the total (Asia/Shanghai).
        pending_id: The pending settlement this write completes, if any.

    Returns:
        The rows that were newly written (empty if all existed).

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The write failed; the caller's transaction rolls back.
    """
    ids = [row.id for row in rows]
    existing = set(connection.execute(_LEDGER_IDS, {"p_ids": ids}).scalars()) if ids else set()
    fresh: list[UsageLedger] = []
    for row in rows:
        if row.id not in existing:
            existing.add(row.id)
            fresh.append(row)
    if fresh:
        connection.execute(
            sa.insert(_LEDGER),
            [{column.name: getattr(row, column.name) for column in _LEDGER.columns} for row in fresh],
        )
        _add_to_daily(connection, user_name, day, fresh)
    if pending_id is not None:
        connection.execute(_DELETE_PENDING, {"p_pending": pending_id})
    return fresh


def _add_to_daily(connection: sa.Connection, user_name: str, day: date, rows: Sequence[UsageLedger]) -> None:
    totals = {
        "input_tokens": sum(row.input_tokens for row in rows),
        "output_tokens": sum(row.output_tokens for row in rows),
        "estimate_input_tokens": sum(row.input_tokens for row in rows if row.source == "estimate"),
        "estimate_output_tokens": sum(row.output_tokens for row in rows if row.source == "estimate"),
        "calls": len(rows),
    }
    now = utcnow()
    result = connection.execute(
        _ADD_TO_DAILY,
        {
            "p_user": user_name,
            "p_day": day,
            "p_input": totals["input_tokens"],
            "p_output": totals["output_tokens"],
            "p_est_input": totals["estimate_input_tokens"],
            "p_est_output": totals["estimate_output_tokens"],
            "p_calls": totals["calls"],
            "p_at": now,
        },
    )
    if result.rowcount == 0:
        connection.execute(
            sa.insert(_DAILY), {"user_name": user_name, "usage_day": day, **totals, "updated_at": now}
        )


def get_daily(engine: Engine, user_name: str, day: date) -> UsageDaily | None:
    """The user's totals for one usage day, or None if nothing was booked."""
    with Session(engine) as db:
        return db.get(UsageDaily, (user_name, day))


def list_daily(engine: Engine, user_name: str, since: date) -> Sequence[UsageDaily]:
    """The user's daily totals from ``since`` (inclusive), oldest first; days without usage absent."""
    with Session(engine) as db:
        query = (
            select(UsageDaily)
            .where(UsageDaily.user_name == user_name, col(UsageDaily.usage_day) >= since)
            .order_by(col(UsageDaily.usage_day))
        )
        return db.exec(query).all()


def list_ledger(engine: Engine, user_name: str, limit: int, offset: int) -> Sequence[UsageLedger]:
    """The user's ledger rows, newest first, one page."""
    with Session(engine) as db:
        query = (
            select(UsageLedger)
            .where(UsageLedger.user_name == user_name)
            .order_by(col(UsageLedger.created_at).desc(), col(UsageLedger.id).desc())
            .offset(offset)
            .limit(limit)
        )
        return db.exec(query).all()


def count_ledger(engine: Engine, user_name: str) -> int:
    """How many ledger rows the user has."""
    with Session(engine) as db:
        return db.exec(select(func.count()).where(UsageLedger.user_name == user_name)).one()


def ledger_for_run(engine: Engine, run_id: str) -> Sequence[UsageLedger]:
    """The ledger rows of one run, in writing order."""
    with Session(engine) as db:
        query = (
            select(UsageLedger)
            .where(UsageLedger.run_id == run_id)
            .order_by(col(UsageLedger.created_at), col(UsageLedger.id))
        )
        return db.exec(query).all()


def ledger_costs(engine: Engine, user_name: str, day: date) -> list[tuple[str | None, int, int]]:
    """The user's cost on one day grouped by currency: ``(currency, cost_micros, calls)``.

    ``currency`` is None for calls of unpriced models (billed at zero).
    """
    with Session(engine) as db:
        query = (
            select(UsageLedger.currency, func.sum(UsageLedger.cost_micros), func.count())
            .where(UsageLedger.user_name == user_name, UsageLedger.usage_day == day)
            .group_by(UsageLedger.currency)
            .order_by(UsageLedger.currency)
        )
        return [(currency, int(cost or 0), int(calls)) for currency, cost, calls in db.exec(query).all()]


# --- pending settlements -----------------------------------------------------------------


def add_pending(engine: Engine, row: BillingPending) -> None:
    """Save a settlement to retry later (its own transaction, apart from the failed write)."""
    with Session(engine, expire_on_commit=False) as db:
        db.add(row)
        db.commit()


def list_pending(engine: Engine, limit: int = 100) -> Sequence[BillingPending]:
    """Pending settlements, oldest first."""
    with Session(engine) as db:
        query = select(BillingPending).order_by(col(BillingPending.created_at)).limit(limit)
        return db.exec(query).all()


def record_pending_failure(engine: Engine, pending_id: str, error: str) -> None:
    """Count one more failed retry of a pending settlement and keep its last error (≤ 2,000 chars)."""
    with Session(engine) as db:
        row = db.get(BillingPending, pending_id)
        if row is None:
            return
        row.attempts += 1
        row.last_error = error[:2000]
        row.updated_at = utcnow()
        db.add(row)
        db.commit()


def pending_summary(engine: Engine) -> tuple[int, datetime | None]:
    """``(how many settlements are pending, when the oldest was saved (UTC) or None)``."""
    with Session(engine) as db:
        count, oldest = db.exec(select(func.count(), func.min(BillingPending.created_at))).one()
        return int(count), oldest


def pending_for_user(engine: Engine, user_name: str, day: date) -> tuple[int, int]:
    """``(pending settlements, their input+output tokens)`` of the user on one usage day."""
    with Session(engine) as db:
        query = select(
            func.count(), func.sum(col(BillingPending.input_tokens) + col(BillingPending.output_tokens))
        ).where(BillingPending.user_name == user_name, BillingPending.usage_day == day)
        count, tokens = db.exec(query).one()
        return int(count), int(tokens or 0)


def daily_of_every_user(engine: Engine, day: date) -> Sequence[UsageDaily]:
    """Every user's totals for one usage day, most tokens first (the operators' overview)."""
    with Session(engine) as db:
        total = col(UsageDaily.input_tokens) + col(UsageDaily.output_tokens)
        query = select(UsageDaily).where(col(UsageDaily.usage_day) == day).order_by(total.desc())
        return db.exec(query).all()
