"""Crash recovery's durations: an interrupted answer's is the agent's working time up to its last trace."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from ventapp.db import billing_models, chat_store, run_recovery, turn_writes
from ventapp.db.engine import make_engine, upgrade_to_head
from ventapp.db.models import utcnow

SESSION = "00000000-0000-0000-0000-000000000011"


@pytest.fixture
def engine(tmp_path: Path) -> sa.Engine:
    url = f"sqlite:///{tmp_path / 'test.db'}"
    upgrade_to_head(url)
    made = make_engine(url)
    chat_store.create_session(made, SESSION, "u", "t", "full")
    return made


def _set(engine: sa.Engine, run_id: str, **moments: datetime) -> None:
    with engine.begin() as connection:
        for column, at in moments.items():
            connection.execute(
                sa.text(f"UPDATE execution_runs SET {column} = :at WHERE id = :run"),
                {"at": at, "run": run_id},
            )


def _settled_call(engine: sa.Engine, run_id: str, call_key: str, at: datetime) -> None:
    """A model call of the run settled while it streamed (the ledger keeps when it happened)."""
    with sa.orm.Session(engine) as db:
        db.add(
            billing_models.UsageLedger(
                id=f"{run_id}:{call_key}",
                run_id=run_id,
                session_id=SESSION,
                user_name="u",
                model="m",
                call_key=call_key,
                input_tokens=10,
                output_tokens=2,
                source="provider",
                usage_day=date(2026, 1, 1),
                created_at=at,
            )
        )
        db.commit()


def _paused_then_resumed(engine: sa.Engine, run_id: str, resumed_ago: timedelta) -> datetime:
    """A run that worked 1 s yesterday, paused for approval, and was resumed ``resumed_ago`` before now."""
    chat_store.start_run(engine, run_id, SESSION, "u", "trace", "chat")
    started = utcnow() - timedelta(hours=20)
    _set(engine, run_id, started_at=started)
    paused = turn_writes.finalise_run(
        engine, run_id, "waiting_input", finished_at=started + timedelta(seconds=1)
    )
    assert paused is not None and paused.duration_ms == 1000
    assert chat_store.reopen_waiting_run(engine, SESSION) == (run_id, 0)
    resumed_at = utcnow() - resumed_ago
    _set(engine, run_id, resumed_at=resumed_at)
    return resumed_at


def test_a_resumed_run_cut_off_by_a_crash_counts_its_work_before_the_pause_and_after_the_resume(
    engine: sa.Engine,
) -> None:
    """Paused, approved, resumed, then kill -9: not just the part before the pause, nor the outage."""
    resumed_at = _paused_then_resumed(engine, "r1", resumed_ago=timedelta(hours=1))
    _settled_call(engine, "r1", "before-the-pause", resumed_at - timedelta(hours=19))
    _settled_call(engine, "r1", "after-the-resume", resumed_at + timedelta(seconds=2))

    assert run_recovery.mark_running_interrupted(engine) == 1  # an hour after the crash

    run = chat_store.get_run(engine, "r1")
    assert run is not None and run.status == "interrupted"
    assert run.duration_ms == 3000, "1 s before the pause + 2 s after the resume, as a finished run counts"


def test_a_partial_answer_saved_after_the_resume_is_a_known_moment_of_work(engine: sa.Engine) -> None:
    resumed_at = _paused_then_resumed(engine, "r2", resumed_ago=timedelta(seconds=5))
    turn_writes.save_partial(
        engine, "r2", {"content": "The result", "tool_calls": [], "citations": [], "usage": {}}
    )
    saved_at = utcnow()
    _settled_call(engine, "r2", "before-the-pause", resumed_at - timedelta(hours=19))

    assert run_recovery.mark_running_interrupted(engine) == 1

    run = chat_store.get_run(engine, "r2")
    assert run is not None and run.duration_ms is not None
    worked_after_ms = (saved_at - resumed_at).total_seconds() * 1000
    assert 1000 + worked_after_ms - 50 <= run.duration_ms <= 1000 + worked_after_ms
    (answer,) = chat_store.list_messages(engine, SESSION)
    assert answer.content == "The result" and "saved_at" not in (answer.usage or {})


def test_a_resumed_run_with_no_trace_after_the_resume_keeps_its_paused_parts_time(engine: sa.Engine) -> None:
    _paused_then_resumed(engine, "r3", resumed_ago=timedelta(minutes=3))
    assert run_recovery.mark_running_interrupted(engine) == 1
    run = chat_store.get_run(engine, "r3")
    assert run is not None and run.duration_ms == 1000


def test_a_run_that_never_paused_is_timed_to_its_last_trace_or_not_at_all(engine: sa.Engine) -> None:
    chat_store.start_run(engine, "r4", SESSION, "u", "trace", "chat")
    started = utcnow() - timedelta(hours=2)
    _set(engine, "r4", started_at=started)
    _settled_call(engine, "r4", "msg-1", started + timedelta(milliseconds=1500))
    chat_store.start_run(engine, "r5", SESSION, "u", "trace", "chat")  # cut off before any trace

    assert run_recovery.mark_running_interrupted(engine) == 2

    timed, untimed = chat_store.get_run(engine, "r4"), chat_store.get_run(engine, "r5")
    assert timed is not None and timed.duration_ms == 1500
    assert untimed is not None and untimed.duration_ms is None, "unknown, not a made-up 0 s"
