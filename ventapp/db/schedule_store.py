"""Storage of schedules and their runs. Access only: the rules live in ``ventapp.scheduler``.

Every function is synchronous and opens one short transaction; async callers run them
through ``asyncio.to_thread``. Times are naive UTC (like every table here).

The tick claim (:func:`claim_tick`) is the one place that decides whether a tick runs:
the insert of ``(schedule_id, scheduled_for)`` either succeeds (this caller fires it) or
violates the unique constraint (someone else did) — on SQLite, PostgreSQL and MariaDB.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from ventapp.db.billing_models import UsageLedger
from ventapp.db.models import ExecutionRun, utcnow
from ventapp.db.schedule_models import SESSION_DELETED, Schedule, ScheduleRun

ClaimOutcome = Literal["claimed", "skipped", "busy", "taken"]


@dataclass(frozen=True)
class Claim:
    """What :func:`claim_tick` decided.

    Attributes:
        outcome: ``claimed`` (this caller runs it), ``skipped`` (recorded: the previous
            execution is still running), ``busy`` (manual: nothing recorded, one is running),
            ``taken`` (another caller claimed the same tick first; nothing to do).
        row_id: The ``schedule_runs`` row written (claimed or skipped), else None.
    """

    outcome: ClaimOutcome
    row_id: str | None = None


@dataclass(frozen=True)
class RunRecord:
    """A schedule run as people read it: its own status, or its pipeline run's when linked.

    Times are naive UTC. ``cost_micros``/``currency`` sum the run's ledger rows.
    """

    id: str
    schedule_id: str
    trigger: str
    scheduled_for: datetime
    status: str
    run_id: str | None
    session_id: str | None
    started_at: datetime
    finished_at: datetime | None
    error: str | None
    error_code: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_micros: int = 0
    currency: str | None = None


# --- schedules -----------------------------------------------------------------------------


def create_schedule(engine: Engine, schedule: Schedule) -> Schedule:
    """Insert ``schedule`` and return it (attributes loaded)."""
    with Session(engine, expire_on_commit=False) as db:
        db.add(schedule)
        db.commit()
        return schedule


def get_schedule(engine: Engine, schedule_id: str) -> Schedule | None:
    """The schedule with this id, whoever owns it, or None."""
    with Session(engine, expire_on_commit=False) as db:
        return db.get(Schedule, schedule_id)


def list_schedules(engine: Engine, user_name: str | None = None) -> Sequence[Schedule]:
    """The user's schedules (every user's when None), oldest first."""
    with Session(engine, expire_on_commit=False) as db:
        query = select(Schedule).order_by(col(Schedule.created_at), col(Schedule.id))
        if user_name is not None:
            query = query.where(Schedule.user_name == user_name)
        return db.exec(query).all()


def update_schedule(
    engine: Engine, schedule_id: str, changes: dict[str, Any], *, rearm: bool
) -> Schedule | None:
    """Apply ``changes`` (column -> value), touch ``updated_at``; ``rearm`` also resets ``armed_at``.

    Returns:
        The updated schedule, or None when it no longer exists.
    """
    with Session(engine, expire_on_commit=False) as db:
        row = db.get(Schedule, schedule_id)
        if row is None:
            return None
        for key, value in changes.items():
            setattr(row, key, value)
        now = utcnow()
        row.updated_at = now
        if rearm:
            row.armed_at = now
        db.add(row)
        db.commit()
        return row


def delete_schedule(engine: Engine, schedule_id: str) -> bool:
    """Delete a schedule and its run records (the sessions they created stay). True if it existed."""
    with Session(engine) as db:
        row = db.get(Schedule, schedule_id)
        if row is None:
            return False
        # One DELETE statement, before the schedule's: deleting each run as an ORM object let the
        # flush delete the schedule first (no relationship orders the two), the database's ON DELETE
        # CASCADE removed the runs, and the runs' own DELETEs then matched nothing (SAWarning).
        db.exec(sa.delete(ScheduleRun).where(col(ScheduleRun.schedule_id) == schedule_id))
        db.delete(row)
        db.commit()
        return True


# --- claims --------------------------------------------------------------------------------


def _running(db: Session, schedule_id: str) -> bool:
    """Is an execution of this schedule still running (claimed, or its pipeline run running)?"""
    query = (
        select(ScheduleRun.id)
        .outerjoin(ExecutionRun, col(ExecutionRun.id) == col(ScheduleRun.run_id))
        .where(
            ScheduleRun.schedule_id == schedule_id,
            ScheduleRun.status == "running",
            sa.or_(col(ScheduleRun.run_id).is_(None), ExecutionRun.status == "running"),
        )
        .limit(1)
    )
    return db.exec(query).first() is not None


def claim_tick(
    engine: Engine, schedule_id: str, user_name: str, trigger: str, scheduled_for: datetime
) -> Claim:
    """Claim one tick (``trigger="cron"``) or a "run now" (``"manual"``) of a schedule.

    One transaction: if an execution of the schedule is still running, a cron tick is
    recorded as ``skipped`` and a manual run is refused (``busy``); otherwise a ``running``
    row is inserted. Two callers claiming the same ``scheduled_for`` race on the unique
    constraint and exactly one wins; the loser gets ``taken``.
    """
    with Session(engine) as db:
        busy = _running(db, schedule_id)
        if busy and trigger == "manual":
            return Claim("busy")
        row = ScheduleRun(
            schedule_id=schedule_id,
            user_name=user_name,
            trigger=trigger,
            scheduled_for=scheduled_for,
            status="skipped" if busy else "running",
        )
        if busy:
            row.error_code = "overlap"
            row.error = "The previous execution of this schedule was still running, so this tick did not run."
            row.finished_at = utcnow()
        db.add(row)
        try:
            db.commit()
        except IntegrityError:
            db.rollback()
            return Claim("taken")
        return Claim("skipped" if busy else "claimed", row.id)


def record_tick(
    engine: Engine,
    schedule_id: str,
    user_name: str,
    scheduled_for: datetime,
    status: str,
    *,
    error_code: str | None = None,
    error: str | None = None,
) -> str | None:
    """Record a tick that will not run (``missed``); None when the tick was already claimed."""
    with Session(engine) as db:
        row = ScheduleRun(
            schedule_id=schedule_id,
            user_name=user_name,
            trigger="cron",
            scheduled_for=scheduled_for,
            status=status,
            error_code=error_code,
            error=error,
            finished_at=utcnow(),
        )
        db.add(row)
        try:
            db.commit()
        except IntegrityError:
            db.rollback()
            return None
        return row.id


def attach_run(engine: Engine, row_id: str, run_id: str, session_id: str) -> None:
    """Link a claimed row to the pipeline run that executes it (its status is read from there)."""
    with Session(engine) as db:
        row = db.get(ScheduleRun, row_id)
        if row is not None:
            row.run_id, row.session_id = run_id, session_id
            db.add(row)
            db.commit()


def close_claim(engine: Engine, row_id: str, status: str, error_code: str | None, error: str | None) -> None:
    """Give a claimed row that never reached the pipeline its final status (``rejected`` …)."""
    with Session(engine) as db:
        row = db.get(ScheduleRun, row_id)
        if row is not None:
            row.status, row.error_code, row.error = status, error_code, error
            row.finished_at = utcnow()
            db.add(row)
            db.commit()


def sweep_unlinked(engine: Engine, claimed_before: datetime) -> int:
    """Claims left ``running`` without a pipeline run by a process that died: ``interrupted``.

    Only rows claimed before ``claimed_before`` are touched, so another live process's
    claim (which links its run within milliseconds) is never taken for a crash.
    """
    with Session(engine) as db:
        rows = db.exec(
            select(ScheduleRun).where(
                ScheduleRun.status == "running",
                col(ScheduleRun.run_id).is_(None),
                col(ScheduleRun.claimed_at) < claimed_before,
            )
        ).all()
        for row in rows:
            row.status, row.error_code = "interrupted", "interrupted"
            row.error = "The server stopped before this execution could start."
            row.finished_at = utcnow()
            db.add(row)
        db.commit()
        return len(rows)


_FINISHED = ("success", "failed", "cancelled")
"""Pipeline run statuses that are an outcome (``running`` and ``waiting_input`` are not)."""


def keep_outcomes(db: Session, session_id: str) -> None:
    """Before a conversation's runs are deleted: copy each of its schedule runs' outcome into the claim.

    A claim linked to a pipeline run reads its status, times and error from ``execution_runs``;
    deleting the conversation deletes those rows, and the schedule's history then showed every such
    run as "running" with a link to a conversation that no longer exists (try19). A finished run
    keeps its status, finish time and error; an unfinished one (running, waiting for a person)
    becomes ``cancelled`` with :data:`SESSION_DELETED`. The link to the conversation goes; the
    tokens of the run, which only ``execution_runs`` held, read 0 (the ledger keeps the cost).
    Part of the caller's transaction (``db`` is not committed here).
    """
    claims = db.exec(select(ScheduleRun).where(ScheduleRun.session_id == session_id)).all()
    if not claims:
        return
    runs = {run.id: run for run in db.exec(select(ExecutionRun).where(ExecutionRun.session_id == session_id))}
    for claim in claims:
        run = runs.get(claim.run_id or "")
        if run is not None and run.status in _FINISHED:
            claim.status, claim.error_code, claim.error = run.status, run.error_code, run.error
            claim.finished_at = run.finished_at or utcnow()
        elif claim.status == "running":
            claim.status, claim.error_code = "cancelled", SESSION_DELETED
            claim.error = "The conversation of this run was deleted before the run finished."
            claim.finished_at = utcnow()
        claim.session_id = None
        db.add(claim)


def latest_cron_tick(engine: Engine, schedule_id: str) -> datetime | None:
    """The newest ``scheduled_for`` of the schedule's cron ticks (any outcome), or None."""
    with Session(engine) as db:
        return db.exec(
            select(sa.func.max(ScheduleRun.scheduled_for)).where(
                ScheduleRun.schedule_id == schedule_id, ScheduleRun.trigger == "cron"
            )
        ).one()


# --- reading runs --------------------------------------------------------------------------


def _records(db: Session, rows: Sequence[tuple[ScheduleRun, ExecutionRun | None]]) -> list[RunRecord]:
    run_ids = [run.id for _, run in rows if run is not None]
    costs: dict[str, tuple[int, str | None]] = {}
    if run_ids:
        sums = db.exec(
            select(
                UsageLedger.run_id, sa.func.sum(UsageLedger.cost_micros), sa.func.max(UsageLedger.currency)
            )
            .where(col(UsageLedger.run_id).in_(run_ids))
            .group_by(UsageLedger.run_id)
        ).all()
        costs = {run_id: (int(total or 0), currency) for run_id, total, currency in sums}
    records = []
    for row, run in rows:
        cost, currency = costs.get(run.id, (0, None)) if run is not None else (0, None)
        records.append(
            RunRecord(
                id=row.id,
                schedule_id=row.schedule_id,
                trigger=row.trigger,
                scheduled_for=row.scheduled_for,
                status=run.status if run is not None else row.status,
                run_id=row.run_id,
                session_id=row.session_id,
                started_at=run.started_at if run is not None else row.claimed_at,
                finished_at=run.finished_at if run is not None else row.finished_at,
                error=run.error if run is not None else row.error,
                error_code=run.error_code if run is not None else row.error_code,
                input_tokens=run.input_tokens if run is not None else 0,
                output_tokens=run.output_tokens if run is not None else 0,
                cost_micros=cost,
                currency=currency,
            )
        )
    return records


def list_runs(engine: Engine, schedule_id: str, limit: int = 50) -> list[RunRecord]:
    """The schedule's runs, newest ``scheduled_for`` first, with their effective status."""
    with Session(engine) as db:
        rows = db.exec(
            select(ScheduleRun, ExecutionRun)
            .outerjoin(ExecutionRun, col(ExecutionRun.id) == col(ScheduleRun.run_id))
            .where(ScheduleRun.schedule_id == schedule_id)
            .order_by(col(ScheduleRun.scheduled_for).desc(), col(ScheduleRun.claimed_at).desc())
            .limit(limit)
        ).all()
        return _records(db, rows)


def latest_runs(engine: Engine, schedule_ids: Sequence[str]) -> dict[str, RunRecord]:
    """``schedule_id -> its newest run`` for the given schedules (absent when none ran yet)."""
    return {sid: runs[0] for sid in schedule_ids if (runs := list_runs(engine, sid, limit=1))}


def waiting_runs(engine: Engine, user_name: str) -> list[RunRecord]:
    """The user's schedule runs that wait for a person (their pipeline run is ``waiting_input``)."""
    with Session(engine) as db:
        rows = db.exec(
            select(ScheduleRun, ExecutionRun)
            .join(ExecutionRun, col(ExecutionRun.id) == col(ScheduleRun.run_id))
            .where(ScheduleRun.user_name == user_name, ExecutionRun.status == "waiting_input")
            .order_by(col(ScheduleRun.scheduled_for).desc())
        ).all()
        return _records(db, rows)
