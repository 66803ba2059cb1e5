"""Crash recovery of runs: the rows still ``running`` whose process is gone (start-up sweep, leases).

Split from :mod:`ventapp.db.chat_store` along its seam: that module stores turns as they
happen; this one closes the ones a dead process left open. Access only, like the store.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from ventapp.db.chat_store import _ledger_usage
from ventapp.db.models import ChatMessage, ExecutionRun, utcnow
from ventapp.db.turn_writes import USAGE_TOTALS, _write_answer


def running_runs(engine: Engine) -> dict[str, str]:
    """Runs whose row says ``running``: run id -> session id (the crash sweep's candidates)."""
    with Session(engine) as db:
        rows = db.exec(select(ExecutionRun).where(ExecutionRun.status == "running")).all()
        return {run.id: run.session_id for run in rows}


def mark_running_interrupted(engine: Engine, *, keep: set[str] | frozenset[str] = frozenset()) -> int:
    """At start-up: every run still ``running`` was cut off by a crash; mark it ``interrupted``.

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
            run.partial = None
            db.add(run)
        db.commit()
        return len(rows)
