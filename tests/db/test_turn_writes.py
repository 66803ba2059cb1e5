"""A turn's own writes (admission, partial and final saves) as Core statements (issue 18)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from ventapp.db import chat_store, turn_writes
from ventapp.db.engine import make_engine, upgrade_to_head
from ventapp.db.models import utcnow

SESSION_4 = "00000000-0000-0000-0000-000000000004"


@pytest.fixture
def engine(tmp_path: Path) -> sa.Engine:
    url = f"sqlite:///{tmp_path / 'test.db'}"
    upgrade_to_head(url)
    return make_engine(url)


def test_finalise_run_is_atomic_and_only_once(engine: sa.Engine) -> None:
    """A write-back of a parked answer must not append it twice (issue 17 item 3)."""
    chat_store.create_session(engine, SESSION_4, "u", "t", "full")
    chat_store.start_run(engine, "r5", SESSION_4, "u", "trace", "chat")
    answer = {
        "session_id": SESSION_4,
        "content": "hello",
        "tool_calls": [],
        "citations": [],
        "usage": {"input_tokens": 3, "output_tokens": 2},
        "status": "complete",
    }
    first = turn_writes.finalise_run(engine, "r5", "success", answer=answer, input_tokens=3, output_tokens=2)
    again = turn_writes.finalise_run(engine, "r5", "success", answer=answer, input_tokens=3, output_tokens=2)
    assert first is not None and again is None
    (message,) = chat_store.list_messages(engine, SESSION_4)
    assert message.content == "hello" and message.usage["input_tokens"] == 3
    run = chat_store.get_run(engine, "r5")
    assert run is not None and run.status == "success" and run.input_tokens == 3


SESSION_6 = "00000000-0000-0000-0000-000000000006"


def test_open_turn_writes_session_message_and_run_together_or_not_at_all(engine: sa.Engine) -> None:
    """Issue 18: one transaction for the turn's start; a failure leaves nothing half-written."""
    turn_writes.open_turn(
        engine,
        session_id=SESSION_6,
        run_id="r6",
        user_name="u",
        trace_id="t",
        kind="chat",
        message="hello",
        new_session=("hello", "plan", "fast"),
    )
    session = chat_store.get_session(engine, SESSION_6)
    assert session is not None
    assert (session.title, session.mode, session.user_name, session.route) == ("hello", "plan", "u", "fast")
    assert [(m.role, m.content) for m in chat_store.list_messages(engine, SESSION_6)] == [("user", "hello")]
    run = chat_store.get_run(engine, "r6")
    assert run is not None and run.status == "running" and run.kind == "chat"

    with pytest.raises(sa.exc.IntegrityError):  # the run id is taken: the whole turn is refused
        turn_writes.open_turn(
            engine,
            session_id="00000000-0000-0000-0000-000000000007",
            run_id="r6",
            user_name="u",
            trace_id="t",
            kind="chat",
            message="again",
            new_session=("again", "full", None),
        )
    assert chat_store.get_session(engine, "00000000-0000-0000-0000-000000000007") is None


def test_open_turn_in_a_session_closes_its_waiting_runs(engine: sa.Engine) -> None:
    chat_store.create_session(engine, SESSION_6, "u", "t", "full")
    chat_store.start_run(engine, "waiting", SESSION_6, "u", "trace", "chat")
    assert turn_writes.finalise_run(engine, "waiting", "waiting_input")
    turn_writes.open_turn(
        engine,
        session_id=SESSION_6,
        run_id="next",
        user_name="u",
        trace_id="t",
        kind="chat",
        message="something else",
        new_session=None,
    )
    closed = chat_store.get_run(engine, "waiting")
    assert closed is not None and (closed.status, closed.error_code) == ("cancelled", "superseded")
    assert chat_store.list_messages(engine, SESSION_6)[-1].content == "something else"


def test_open_turn_stores_a_new_route_on_the_session_only_when_asked(engine: sa.Engine) -> None:
    """A turn sent with another model keeps it for the session's next turns, in the same transaction."""
    chat_store.create_session(engine, SESSION_6, "u", "t", "full", "fast")
    turn = {"session_id": SESSION_6, "user_name": "u", "trace_id": "t", "kind": "chat", "message": "m"}
    turn_writes.open_turn(engine, run_id="keep", new_session=None, **turn)
    assert chat_store.get_session(engine, SESSION_6).route == "fast"  # type: ignore[union-attr]
    turn_writes.finalise_run(engine, "keep", "success")
    turn_writes.open_turn(engine, run_id="main", new_session=None, set_route=(None,), **turn)
    assert chat_store.get_session(engine, SESSION_6).route is None  # type: ignore[union-attr]


def test_save_partials_writes_running_runs_only(engine: sa.Engine) -> None:
    chat_store.create_session(engine, SESSION_6, "u", "t", "full")
    for run_id in ("a", "b", "done"):
        chat_store.start_run(engine, run_id, SESSION_6, "u", "trace", "chat")
    assert turn_writes.finalise_run(engine, "done", "success")
    turn_writes.save_partials(
        engine, {run_id: {"content": f"so far {run_id}", "tool_calls": []} for run_id in ("a", "b", "done")}
    )
    saved = [chat_store.get_run(engine, r).partial for r in ("a", "b", "done")]  # type: ignore[union-attr]
    stamps = [partial.pop("saved_at") for partial in saved[:2]]  # type: ignore[union-attr]
    # Stamped when saved: crash recovery times an interrupted run to its last partial save.
    assert all(abs(datetime.fromisoformat(stamp) - utcnow()) < timedelta(seconds=5) for stamp in stamps)
    assert saved == [
        {"content": "so far a", "tool_calls": []},
        {"content": "so far b", "tool_calls": []},
        None,
    ]


def test_a_resumed_run_extends_its_answer_and_the_run_keeps_the_first_token_time(engine: sa.Engine) -> None:
    """The final save merges into a paused run's answer: text appended, cards and citations merged."""
    turn = {"session_id": SESSION_4, "user_name": "u", "trace_id": "t", "kind": "chat", "message": "q"}
    turn_writes.open_turn(
        engine, run_id="r", new_session=("q", "full", None), attachments=["/workspace/uploads/a.txt"], **turn
    )
    paused = {
        "session_id": SESSION_4,
        "content": "first",
        "reasoning": "Ask before calculating.",
        "tool_calls": [{"tool_call_id": "c1", "tool": "calc", "content": None}],
        "citations": [{"url": "u1", "title": "one"}],
        "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8, "reasoning_tokens": 2},
        "status": "waiting",
    }
    assert turn_writes.finalise_run(
        engine, "r", "waiting_input", answer=paused, input_tokens=5, output_tokens=3, first_token_ms=12
    )
    with engine.begin() as connection:  # as resume.py's reopen_waiting_run does
        connection.execute(sa.text("UPDATE execution_runs SET status = 'running' WHERE id = 'r'"))
    rest = {
        "session_id": SESSION_4,
        "content": "second",
        "reasoning": "Approved: calculate.",
        "tool_calls": [{"tool_call_id": "c1", "content": "42"}, {"tool_call_id": "c2", "tool": "look"}],
        "citations": [{"url": "u1", "title": "one again"}, {"url": "u2"}],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2, "reasoning_tokens": 1},
        "status": "complete",
    }
    assert turn_writes.finalise_run(
        engine, "r", "success", answer=rest, input_tokens=1, output_tokens=1, first_token_ms=99
    )
    question, answer = chat_store.list_messages(engine, SESSION_4)
    assert question.attachments == ["/workspace/uploads/a.txt"] and answer.attachments is None
    assert (answer.content, answer.status) == ("first\n\nsecond", "complete")
    assert answer.reasoning == "Ask before calculating.\n\nApproved: calculate.", "a paragraph per part"
    assert question.reasoning is None
    assert answer.tool_calls == [
        {"tool_call_id": "c1", "tool": "calc", "content": "42"},
        {"tool_call_id": "c2", "tool": "look"},
    ]
    assert answer.citations == [{"url": "u1", "title": "one again"}, {"url": "u2"}]
    assert answer.usage["input_tokens"] == 6 and answer.usage["total_tokens"] == 10
    assert answer.usage["reasoning_tokens"] == 3, "as done says (try11: the history kept the last part's)"
    run = chat_store.get_run(engine, "r")
    assert run is not None
    assert (run.input_tokens, run.output_tokens, run.first_token_ms, run.partial) == (6, 4, 12, None)
    assert run.duration_ms is not None and run.finished_at is not None


SESSION_7 = "00000000-0000-0000-0000-000000000007"


def test_a_resumed_runs_duration_is_its_working_time_without_the_wait_for_approval(engine: sa.Engine) -> None:
    """Tester: approved the next morning, an answer's footer read "12 小时" for a second of work."""
    chat_store.create_session(engine, SESSION_7, "u", "t", "full")
    chat_store.start_run(engine, "r7", SESSION_7, "u", "trace", "chat")
    started = datetime.now(UTC).replace(tzinfo=None) - timedelta(hours=12)
    with engine.begin() as connection:  # the run started yesterday evening and paused a second later
        connection.execute(
            sa.text("UPDATE execution_runs SET started_at = :at WHERE id = 'r7'"), {"at": started}
        )
    paused = turn_writes.finalise_run(
        engine, "r7", "waiting_input", finished_at=started + timedelta(seconds=1)
    )
    assert paused is not None and paused.duration_ms == 1000

    assert chat_store.reopen_waiting_run(engine, SESSION_7) == ("r7", 0)  # approved this morning
    run = chat_store.get_run(engine, "r7")
    assert run is not None and run.resumed_at is not None
    finished = turn_writes.finalise_run(
        engine, "r7", "success", finished_at=run.resumed_at + timedelta(seconds=2)
    )
    assert finished is not None and finished.duration_ms == 3000, "1 s before the pause + 2 s after"
    run = chat_store.get_run(engine, "r7")
    assert run is not None and run.duration_ms == 3000 and run.started_at == started

    # A second pause and resume add their parts the same way.
    chat_store.start_run(engine, "r8", SESSION_7, "u", "trace", "chat")
    first = turn_writes.finalise_run(engine, "r8", "waiting_input")
    assert first is not None
    chat_store.reopen_waiting_run(engine, SESSION_7)
    resumed = chat_store.get_run(engine, "r8")
    assert resumed is not None and resumed.resumed_at is not None
    again = turn_writes.finalise_run(
        engine, "r8", "waiting_input", finished_at=resumed.resumed_at + timedelta(milliseconds=500)
    )
    assert again is not None and again.duration_ms == first.duration_ms + 500
    chat_store.reopen_waiting_run(engine, SESSION_7)
    resumed = chat_store.get_run(engine, "r8")
    assert resumed is not None and resumed.resumed_at is not None
    last = turn_writes.finalise_run(
        engine, "r8", "success", finished_at=resumed.resumed_at + timedelta(seconds=1)
    )
    assert last is not None and last.duration_ms == first.duration_ms + 1500
