"""The schedule store: the tick claim decides, across threads and processes, on one database."""

from __future__ import annotations

import multiprocessing
import warnings
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SAWarning
from sqlmodel import Session, select

from ventapp.db import chat_store, schedule_store, session_store, turn_writes
from ventapp.db.engine import make_engine, upgrade_to_head
from ventapp.db.schedule_models import Schedule, ScheduleRun
from ventapp.scheduler.run_errors import run_error_text

TICK0 = datetime(2026, 12, 1, 0, 0)
TICKS = 20
PROCESSES = 3


def _engine(tmp_path: Path) -> tuple[Engine, str]:
    url = f"sqlite:///{tmp_path / 'app.db'}"
    upgrade_to_head(url)
    return make_engine(url), url


def _schedule(engine: Engine) -> Schedule:
    return schedule_store.create_schedule(
        engine, Schedule(user_name="alice", name="report", prompt="hi", cron="* * * * *")
    )


def _claim_all(
    url: str, schedule_id: str, barrier: multiprocessing.synchronize.Barrier
) -> list[tuple[int, str]]:
    engine = make_engine(url)
    barrier.wait()
    outcomes = []
    for index in range(TICKS):
        claim = schedule_store.claim_tick(
            engine, schedule_id, "alice", "cron", TICK0 + timedelta(minutes=index)
        )
        outcomes.append((index, claim.outcome))
        if claim.outcome == "claimed" and claim.row_id:
            # The execution ends at once, so the next tick is not an overlap.
            schedule_store.close_claim(engine, claim.row_id, "rejected", "test", "done")
    engine.dispose()
    return outcomes


def _worker(
    url: str, schedule_id: str, barrier: multiprocessing.synchronize.Barrier, out: multiprocessing.Queue
) -> None:
    out.put(_claim_all(url, schedule_id, barrier))


def test_three_processes_claim_each_tick_exactly_once(tmp_path: Path) -> None:
    engine, url = _engine(tmp_path)
    schedule = _schedule(engine)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(PROCESSES)
    out = context.Queue()
    workers = [
        context.Process(target=_worker, args=(url, schedule.id, barrier, out)) for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    results = [out.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(30)
    winners = Counter(index for result in results for index, outcome in result if outcome != "taken")
    assert winners == dict.fromkeys(range(TICKS), 1), "every tick won by exactly one process"
    # A tick claimed while another process still held the previous one open is a recorded skip.
    assert {outcome for result in results for _, outcome in result} <= {"claimed", "skipped", "taken"}
    rows = schedule_store.list_runs(engine, schedule.id, limit=100)
    assert len(rows) == TICKS and len({row.scheduled_for for row in rows}) == TICKS


def test_a_tick_claimed_while_the_previous_runs_is_skipped_and_run_now_is_busy(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path)
    schedule = _schedule(engine)
    first = schedule_store.claim_tick(engine, schedule.id, "alice", "cron", TICK0)
    assert first.outcome == "claimed"
    chat_store.create_session(engine, "00000000-0000-0000-0000-000000000001", "alice", "t", "full")
    chat_store.start_run(engine, "run-1", "00000000-0000-0000-0000-000000000001", "alice", "", "schedule")
    schedule_store.attach_run(engine, first.row_id or "", "run-1", "00000000-0000-0000-0000-000000000001")

    overlap = schedule_store.claim_tick(engine, schedule.id, "alice", "cron", TICK0 + timedelta(minutes=1))
    assert overlap.outcome == "skipped"
    assert schedule_store.claim_tick(engine, schedule.id, "alice", "manual", TICK0).outcome == "busy"
    assert schedule_store.claim_tick(engine, schedule.id, "alice", "cron", TICK0).outcome == "taken"

    turn_writes.finalise_run(engine, "run-1", "success")
    after = schedule_store.claim_tick(engine, schedule.id, "alice", "cron", TICK0 + timedelta(minutes=2))
    assert after.outcome == "claimed", "a finished execution no longer blocks"
    statuses = [(row.trigger, row.status) for row in schedule_store.list_runs(engine, schedule.id)]
    assert statuses == [("cron", "running"), ("cron", "skipped"), ("cron", "success")]


def test_sweep_marks_only_old_unlinked_claims(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path)
    schedule = _schedule(engine)
    claim = schedule_store.claim_tick(engine, schedule.id, "alice", "cron", TICK0)
    assert schedule_store.sweep_unlinked(engine, TICK0 - timedelta(days=3650)) == 0, "a fresh claim is live"
    assert schedule_store.sweep_unlinked(engine, datetime(2100, 1, 1)) == 1
    [row] = schedule_store.list_runs(engine, schedule.id)
    assert row.id == claim.row_id and row.status == "interrupted"


def test_deleting_a_schedule_with_runs_deletes_them_without_a_warning(tmp_path: Path) -> None:
    """Tester #14: ``SAWarning: DELETE statement on table 'schedule_runs' expected to delete 17 row(s); 0 were matched``."""
    engine, _ = _engine(tmp_path)
    schedule, other = _schedule(engine), _schedule(engine)
    for index in range(17):
        for each in (schedule, other):
            claim = schedule_store.claim_tick(
                engine, each.id, "alice", "cron", TICK0 + timedelta(minutes=index)
            )
            assert claim.row_id
            schedule_store.close_claim(engine, claim.row_id, "rejected", "test", "done")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SAWarning)
        assert schedule_store.delete_schedule(engine, schedule.id)
    with Session(engine) as db:
        left = db.exec(select(ScheduleRun.schedule_id)).all()
    assert set(left) == {other.id} and len(left) == 17, "the other schedule's runs stay"
    assert not schedule_store.delete_schedule(engine, schedule.id)


def test_deleting_a_conversation_keeps_its_schedule_runs_outcomes(tmp_path: Path) -> None:
    """try19: after the conversation was deleted, its waiting run read "running" for ever (and its
    finished runs too: their status lived only in the deleted ``execution_runs`` rows)."""
    engine, _ = _engine(tmp_path)
    schedule = _schedule(engine)
    session = "00000000-0000-0000-0000-000000000002"
    chat_store.create_session(engine, session, "alice", "t", "full")
    for minute, run_id in enumerate(("run-ok", "run-waiting")):
        claim = schedule_store.claim_tick(
            engine, schedule.id, "alice", "cron", TICK0 + timedelta(minutes=minute)
        )
        chat_store.start_run(engine, run_id, session, "alice", "", "schedule")
        schedule_store.attach_run(engine, claim.row_id or "", run_id, session)
        turn_writes.finalise_run(engine, run_id, "success" if run_id == "run-ok" else "waiting_input")
    before = {row.run_id: row for row in schedule_store.list_runs(engine, schedule.id)}
    assert before["run-waiting"].status == "waiting_input" and before["run-ok"].finished_at is not None

    assert session_store.delete_session(engine, session, "alice")
    after = {row.run_id: row for row in schedule_store.list_runs(engine, schedule.id)}
    assert after["run-ok"].status == "success" and after["run-ok"].finished_at == before["run-ok"].finished_at
    waiting = after["run-waiting"]
    assert (waiting.status, waiting.error_code) == ("cancelled", "session_deleted") and waiting.finished_at
    assert (
        run_error_text(waiting.error_code, waiting.error, "zh-CN") == "这次执行还没结束，它的对话就被删除了。"
    )
    assert all(row.session_id is None for row in after.values()), "no link to a deleted conversation"
    claim = schedule_store.claim_tick(engine, schedule.id, "alice", "manual", TICK0 + timedelta(hours=1))
    assert claim.outcome == "claimed", "the cancelled run no longer blocks the schedule"
