"""Settlement: book a run's model calls in the ledger exactly once (spec 002, "持久化结算").

Pitfall 9: the context meter and the ledger are not connected by themselves; the run
pipeline's finalisation must call :func:`settle` with ``meter.calls``, or chats are
never billed while ``/api/usage/today`` quietly shows 0.

Guarantees:

* one ledger row per call, id ``f"{run_id}:{call.call_key}"``: settling the same run
  again (a retry, a duplicate finalisation) writes nothing twice;
* ledger rows and the user's daily total are written in one transaction;
* if that write fails, the settlement is saved to ``billing_pending`` in a separate
  transaction and :func:`retry_pending` books it later (at start-up and every minute,
  :func:`pending_retry_loop`); the retry keeps the original usage day;
* if ``billing_pending`` cannot be written either (the database itself is down or
  locked), the settlement is parked in the spool file outside the database
  (:class:`~ventapp.db.spool.Spool`, fsynced) and booked from there when the database
  returns (:func:`book_spooled`, driven by :mod:`ventapp.agent.writeback`);
* only if even the spool file cannot be written are the figures logged at ERROR
  ("BILLING LOST") for reconciliation with the provider's bill.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ventapp.billing.day import usage_day
from ventapp.billing.pricing import Price, price_of
from ventapp.billing.usage import CallUsage
from ventapp.db import billing_store
from ventapp.db.billing_models import BillingPending, UsageLedger
from ventapp.db.models import utcnow
from ventapp.db.spool import Spool

logger = logging.getLogger(__name__)

MAX_LEDGER_ID = 255


@dataclass(frozen=True)
class SettleResult:
    """What one :func:`settle` call booked.

    Attributes:
        run_id: The run settled.
        status: ``settled`` (in the ledger), ``pending`` (saved to ``billing_pending`` for
            retry), ``spooled`` (the database refused both: parked in the spool file) or
            ``failed`` (nothing could be written; figures are in the log).
        rows_written: Ledger rows added by this call.
        rows_skipped: Calls already in the ledger (an earlier settlement of the run).
        input_tokens: Input tokens newly booked.
        output_tokens: Output tokens newly booked.
        cost_micros: Cost newly booked, in micro-units of ``currency``.
        currency: ``CNY``/``USD``, or None when the model is unpriced (billed at zero).
        pending_id: Id of the ``billing_pending`` row when ``status == "pending"``.
    """

    run_id: str
    status: Literal["settled", "pending", "spooled", "failed"]
    rows_written: int = 0
    rows_skipped: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_micros: int = 0
    currency: str | None = None
    pending_id: str | None = None


@dataclass(frozen=True)
class RetryReport:
    """Outcome of one :func:`retry_pending` pass: settlements booked, still failing, left over."""

    settled: int = 0
    failed: int = 0
    remaining: int = 0


def ledger_id(run_id: str, call_key: str) -> str:
    """The stable ledger id of one call: ``f"{run_id}:{call_key}"`` (hashed if over 255 chars)."""
    plain = f"{run_id}:{call_key}"
    if len(plain) <= MAX_LEDGER_ID:
        return plain
    return f"{run_id}:sha256:{hashlib.sha256(call_key.encode()).hexdigest()}"


def _naive_utc(at: datetime | None) -> datetime:
    if at is None:
        return utcnow()
    return at if at.tzinfo is None else at.astimezone(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class _Settlement:
    """One run's model calls to book, and when they happened (naive UTC: sets the usage day)."""

    run_id: str
    session_id: str
    user_name: str
    model: str
    calls: Sequence[CallUsage]
    occurred_at: datetime

    @property
    def input_tokens(self) -> int:
        return sum(call.input_tokens for call in self.calls)

    @property
    def output_tokens(self) -> int:
        return sum(call.output_tokens for call in self.calls)

    def ledger_rows(self, price: Price | None) -> list[UsageLedger]:
        day = usage_day(self.occurred_at)
        return [
            UsageLedger(
                id=ledger_id(self.run_id, call.call_key),
                run_id=self.run_id,
                session_id=self.session_id,
                user_name=self.user_name,
                model=self.model,
                call_key=call.call_key[:MAX_LEDGER_ID],
                input_tokens=max(0, call.input_tokens),
                output_tokens=max(0, call.output_tokens),
                source=call.source,
                main_thread=call.main_thread,
                cost_micros=price.cost_micros(call.input_tokens, call.output_tokens) if price else 0,
                currency=price.currency if price else None,
                priced=price is not None,
                usage_day=day,
                created_at=self.occurred_at,
            )
            for call in self.calls
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "session_id": self.session_id,
            "user_name": self.user_name,
            "model": self.model,
            "calls": [dataclasses.asdict(call) for call in self.calls],
            "occurred_at": self.occurred_at.isoformat(),
        }


def _book(engine: Engine, settlement: _Settlement, pending_id: str | None = None) -> SettleResult:
    with engine.begin() as connection:
        return _book_in(connection, settlement, pending_id)


def _book_in(
    connection: sa.Connection, settlement: _Settlement, pending_id: str | None = None
) -> SettleResult:
    row = billing_store.price_in(connection, settlement.model)
    price = price_of(row) if row is not None else None
    rows = settlement.ledger_rows(price)
    fresh = billing_store.write_settlement_in(
        connection,
        rows,
        user_name=settlement.user_name,
        day=usage_day(settlement.occurred_at),
        pending_id=pending_id,
    )
    return SettleResult(
        run_id=settlement.run_id,
        status="settled",
        rows_written=len(fresh),
        rows_skipped=len({row.id for row in rows}) - len(fresh),
        input_tokens=sum(row.input_tokens for row in fresh),
        output_tokens=sum(row.output_tokens for row in fresh),
        cost_micros=sum(row.cost_micros for row in fresh),
        currency=price.currency if price else None,
    )


def settle(
    engine: Engine,
    *,
    run_id: str,
    session_id: str,
    user_name: str,
    model: str,
    calls: list[CallUsage],
    at: datetime | None = None,
    spool: Spool | None = None,
) -> SettleResult:
    """Book a run's model calls in the ledger and the user's daily total. Blocking: use a thread.

    Never raises for a database failure: the settlement then goes to ``billing_pending``.

    Args:
        engine: The relational store.
        run_id: The run's id (first half of every ledger id).
        session_id: The run's session (kept on the rows for reference).
        user_name: Who pays.
        model: The model name the calls went to (its price sets the cost).
        calls: ``ContextMeter.calls``: one ``CallUsage`` per model call, sub-agents included.
        at: When the usage happened (naive = UTC); sets the Asia/Shanghai usage day. Default now.
        spool: Where to park the settlement when the database takes neither the ledger rows
            nor the pending record; without one that case is only logged.

    Returns:
        What was booked, or that it is pending or spooled (failed only if nothing could be written).
    """
    if not calls:
        return SettleResult(run_id=run_id, status="settled")
    settlement = _Settlement(run_id, session_id, user_name, model, calls, _naive_utc(at))
    try:
        return _book(engine, settlement)
    except Exception as exc:
        logger.warning("settling run %s failed (%r); saving it to billing_pending", run_id, exc)
        pending = BillingPending(
            run_id=run_id,
            session_id=session_id,
            user_name=user_name,
            model=model,
            calls=[dataclasses.asdict(call) for call in calls],
            input_tokens=settlement.input_tokens,
            output_tokens=settlement.output_tokens,
            usage_day=usage_day(settlement.occurred_at),
            occurred_at=settlement.occurred_at,
            last_error=repr(exc)[:2000],
        )
        pending_id = pending.id
        try:
            billing_store.add_pending(engine, pending)
        except Exception as again:
            return _park(spool, again, settlement)
        return SettleResult(
            run_id=run_id,
            status="pending",
            input_tokens=pending.input_tokens,
            output_tokens=pending.output_tokens,
            pending_id=pending_id,
        )


def book_within(
    connection: sa.Connection,
    *,
    run_id: str,
    session_id: str,
    user_name: str,
    model: str,
    calls: list[CallUsage],
) -> SettleResult:
    """Book a run's calls inside a caller's transaction, which commits or rolls back with them.

    For the run's final save (issue 18): its answer, status and last calls in one transaction
    and one commit. Unlike :func:`settle` this raises when the database refuses, and nothing of
    the caller's transaction is kept then: the caller parks the answer with its calls.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The write failed.
    """
    settlement = _Settlement(run_id, session_id, user_name, model, calls, _naive_utc(None))
    return _book_in(connection, settlement)


def spool_payload(
    *,
    run_id: str,
    session_id: str,
    user_name: str,
    model: str,
    calls: Sequence[CallUsage],
    occurred_at: datetime,
) -> dict[str, Any]:
    """A settlement as JSON, for the spool; :func:`book_spooled` books it (ids keep it exactly-once)."""
    return _Settlement(run_id, session_id, user_name, model, calls, occurred_at).to_json()


def _park(spool: Spool | None, error: Exception, settlement: _Settlement) -> SettleResult:
    run_id = settlement.run_id
    payload = settlement.to_json()
    if spool is not None:
        try:
            spool.append("settlement", payload)
        except Exception:
            logger.exception("could not park the settlement of run %s in the spool file", run_id)
        else:
            logger.warning(
                "run %s: the database refused the settlement and billing_pending (%r); parked in %s",
                run_id,
                error,
                spool.path,
            )
            return SettleResult(
                run_id=run_id,
                status="spooled",
                input_tokens=settlement.input_tokens,
                output_tokens=settlement.output_tokens,
            )
    logger.error(
        "BILLING LOST: run %s of user %r could not be settled, saved as pending nor spooled; model=%s "
        "calls=%s — reconcile with the provider's bill",
        run_id,
        settlement.user_name,
        settlement.model,
        payload["calls"],
    )
    return SettleResult(run_id=run_id, status="failed")


def book_spooled(engine: Engine, payload: dict[str, Any]) -> SettleResult:
    """Book a settlement parked by :func:`spool_payload` (its original usage day). Blocking.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The database still refuses it; it stays parked.
    """
    return _book(
        engine,
        _Settlement(
            payload["run_id"],
            payload["session_id"],
            payload["user_name"],
            payload["model"],
            _calls_from_json(payload["calls"]),
            datetime.fromisoformat(payload["occurred_at"]),
        ),
    )


def _calls_from_json(raw: list[dict[str, Any]]) -> list[CallUsage]:
    return [
        CallUsage(
            call_key=str(item["call_key"]),
            input_tokens=int(item["input_tokens"]),
            output_tokens=int(item["output_tokens"]),
            source="estimate" if item.get("source") == "estimate" else "provider",
            main_thread=bool(item.get("main_thread", True)),
        )
        for item in raw
    ]


def retry_pending(engine: Engine, *, limit: int = 100) -> RetryReport:
    """Book pending settlements, oldest first; each one in its own transaction. Blocking.

    A booked settlement's pending row is deleted in the same transaction as its
    ledger rows, and ledger ids are stable, so a retry that races another (or
    repeats after a crash) books nothing twice. A failure is counted on the row
    (``attempts``, ``last_error``) and retried next time; rows are never dropped.

    Args:
        engine: The relational store.
        limit: At most this many settlements per pass.

    Returns:
        How many were booked, how many failed again, and how many remain pending.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: ``billing_pending`` itself cannot be read.
    """
    settled = failed = 0
    for row in billing_store.list_pending(engine, limit=limit):
        try:
            calls = _calls_from_json(row.calls)
            settlement = _Settlement(
                row.run_id, row.session_id, row.user_name, row.model, calls, row.occurred_at
            )
            _book(engine, settlement, pending_id=row.id)
            settled += 1
        except Exception as exc:
            failed += 1
            logger.warning("retrying pending settlement of run %s failed: %r", row.run_id, exc)
            try:
                billing_store.record_pending_failure(engine, row.id, repr(exc))
            except Exception:
                logger.exception("could not record the failed retry of run %s", row.run_id)
    remaining, _ = billing_store.pending_summary(engine)
    if settled:
        logger.info("booked %d pending settlement(s); %d still pending", settled, remaining)
    return RetryReport(settled=settled, failed=failed, remaining=remaining)


async def pending_retry_loop(engine: Engine, interval_s: float = 60.0) -> None:
    """Retry pending settlements now and then every ``interval_s`` seconds, until cancelled.

    Start it as a task in the app's lifespan and cancel it on shutdown. A failing
    pass is logged and the loop carries on.

    Args:
        engine: The relational store.
        interval_s: Seconds between passes (default 60).
    """
    while True:
        try:
            await asyncio.to_thread(retry_pending, engine)
        except Exception:
            logger.exception("pending settlement retry pass failed")
        await asyncio.sleep(interval_s)
