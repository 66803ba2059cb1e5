"""Crash recovery of runs: the rows still ``running`` whose process is gone (start-up sweep, leases).

Split from :mod:`ventapp.db.chat_store` along its seam: that module stores turns as they
happen; this one closes the ones a dead process left open. Access only, like the store.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from ventapp.db.billing_models import UsageLedger
from ventapp.db.chat_store import _ledger_usage
from ventapp.db.models import ChatMessage, ExecutionRun, utcnow
from ventapp.db.turn_writes import USAGE_TOTALS, _write_answer, working_ms


def running_runs(engine: Engine) -> dict[str, str]:
    """Runs whose row says ``running``: run id -> session id (the crash sweep's candidates)."""
    with Session(engine) as db:
        rows = db.exec(select(ExecutionRun).where(ExecutionRun.status == "running")).all()
        return {run.id: run.session_id for run in rows}


def last_known_work(db: Session, run: ExecutionRun, partial: dict[str, Any]) -> datetime | None:
    """The latest moment a crashed run is known to have been working (naive UTC), or None.

    Its traces in the database: its last partial answer's ``saved_at`` and its model calls
    settled in the ledger (``created_at`` is when a call happened, even when booked later).
    The crash itself left none, and the start-up that finds it may come hours later.
    """
    moments = [db.exec(select(func.max(UsageLedger.created_at)).where(UsageLedger.run_id == run.id)).one()]
    if isinstance(partial.get("saved_at"), str):
        moments.append(datetime.fromisoformat(partial["saved_at"]))
    known = [moment for moment in moments if moment is not None]
    return max(known) if known else None


def _recovered_duration_ms(run: ExecutionRun, last_work: datetime | None) -> int | None:
    """The working time a finished run would store (:func:`working_ms`), ended at ``last_work``.

    A resumed run with no trace after its resume keeps its paused parts' time; a run that never
    paused and left no trace has no known duration (None, not 0 s).
    """
    if run.resumed_at is None and last_work is None:
        return run.duration_ms
    part_start = run.resumed_at or run.started_at
    end = part_start if last_work is None else max(part_start, last_work)
    return working_ms(run.started_at, run.resumed_at, run.duration_ms, end)


def mark_running_interrupted(engine: Engine, *, keep: set[str] | frozenset[str] = frozenset()) -> int:
    """At start-up: every run still ``running`` was cut off by a crash; mark it ``interrupted``.

    Its ``duration_ms`` is its working time as a finished run's is (before any pause, plus
    after its resume), up to its last known moment of work (:func:`last_known_work`).
    Its message keeps what was saved while it streamed (the partial answer, its reasoning, tool
    cards, citations) and the usage booked in the ledger for its finished calls, so the
    conversation shows what was said and paid for, not a silent gap.

    Args:
        engine: The relational store.
        keep: Runs left alone: their real end waits in the spool to be written back.

    Returns:
        How many rows changed.
    """
    with Session(engine) as db:
        rows = [
            run
            for run in db.exec(select(ExecutionRun).where(ExecutionRun.status == "running")).all()
            if run.id not in keep
        ]
        for run in rows:
            partial = run.partial or {}
            booked = _ledger_usage(db, run.id)
            earlier = db.exec(
                select(ChatMessage).where(ChatMessage.run_id == run.id, ChatMessage.role == "assistant")
            ).first()
            before = earlier.usage if earlier is not None else {}
            # A resumed run's message already holds the paused part's usage: add only the rest.
            usage = {
                **booked,
                **{key: max(0, booked[key] - int(before.get(key) or 0)) for key in USAGE_TOTALS},
            }
            _write_answer(  # the run's own final save, on this session's transaction
                db.connection(),
                run.session_id,
                run.id,
                str(partial.get("content") or ""),
                tool_calls=list(partial.get("tool_calls") or []),
                citations=list(partial.get("citations") or []),
                usage=usage,
                status="interrupted",
                reasoning=partial.get("reasoning"),
            )
            run.status = "interrupted"
            run.error = "The server stopped while this run was in progress."
            run.error_code = "interrupted"
            run.input_tokens = booked["input_tokens"]
            run.output_tokens = booked["output_tokens"]
            run.finished_at = utcnow()
            run.duration_ms = _recovered_duration_ms(run, last_known_work(db, run, partial))
            run.partial = None
            db.add(run)
        db.commit()
        return len(rows)
