"""Storage order and migrations (pitfall 8)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from ventapp.db import billing_models, chat_store, run_recovery
from ventapp.db import models as db_models
from ventapp.db.engine import make_engine, pending_revision, upgrade_to_head


@pytest.fixture
def engine(tmp_path: Path) -> sa.Engine:
    url = f"sqlite:///{tmp_path / 'test.db'}"
    upgrade_to_head(url)
    return make_engine(url)


def test_migration_creates_tables_and_reaches_head(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    engine = make_engine(url)
    assert pending_revision(engine, url) is not None
    upgrade_to_head(url)
    assert pending_revision(engine, url) is None
    tables = set(sa.inspect(engine).get_table_names())
    assert {"chat_sessions", "chat_messages", "execution_runs"} <= tables


def test_messages_in_the_same_instant_keep_writing_order(
    engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pitfall 8: with a frozen clock the answer must still sort after the question."""
    frozen = datetime(2026, 1, 1, 12, 0, 0)
    monkeypatch.setattr(chat_store, "utcnow", lambda: frozen)
    chat_store.create_session(engine, "00000000-0000-0000-0000-000000000001", "u", "t", "full")
    for index in range(20):
        chat_store.add_message(
            engine,
            "00000000-0000-0000-0000-000000000001",
            "user" if index % 2 == 0 else "assistant",
            f"m{index}",
        )
    rows = chat_store.list_messages(engine, "00000000-0000-0000-0000-000000000001")
    assert [row.content for row in rows] == [f"m{index}" for index in range(20)]


def test_timestamps_keep_microseconds(engine: sa.Engine) -> None:
    chat_store.create_session(engine, "00000000-0000-0000-0000-000000000002", "u", "t", "full")
    stamp = datetime(2026, 1, 1, 12, 0, 0, 123456)
    with sa.orm.Session(engine) as db:
        db.add(
            db_models.ChatMessage(
                session_id="00000000-0000-0000-0000-000000000002", role="user", content="x", created_at=stamp
            )
        )
        db.commit()
    (row,) = chat_store.list_messages(engine, "00000000-0000-0000-0000-000000000002")
    assert row.created_at.microsecond == 123456


def test_crashed_runs_become_interrupted(engine: sa.Engine) -> None:
    chat_store.create_session(engine, "00000000-0000-0000-0000-000000000003", "u", "t", "full")
    chat_store.start_run(engine, "r1", "00000000-0000-0000-0000-000000000003", "u", "trace", "chat")
    assert run_recovery.mark_running_interrupted(engine) == 1
    run = chat_store.get_run(engine, "r1")
    assert run is not None and run.status == "interrupted"
    (trace,) = chat_store.list_messages(engine, "00000000-0000-0000-0000-000000000003")
    assert trace.role == "assistant" and trace.status == "interrupted" and trace.run_id == "r1"


def _ledger_row(run_id: str, call_key: str, tokens_in: int, tokens_out: int) -> billing_models.UsageLedger:
    return billing_models.UsageLedger(
        id=f"{run_id}:{call_key}",
        run_id=run_id,
        session_id=SESSION_4,
        user_name="u",
        model="m",
        call_key=call_key,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        source="provider",
        cost_micros=7,
        currency="CNY",
        usage_day=date(2026, 1, 1),
    )


SESSION_4 = "00000000-0000-0000-0000-000000000004"


def test_crashed_run_keeps_its_partial_answer_and_booked_usage(engine: sa.Engine) -> None:
    """Issue 17 item 4: after kill -9 the interrupted run shows the saved partial answer and its usage."""
    chat_store.create_session(engine, SESSION_4, "u", "t", "full")
    chat_store.start_run(engine, "r4", SESSION_4, "u", "trace", "chat")
    card = {"tool_call_id": "c1", "tool": "calculate", "cn_tool": "计算", "args": {}, "content": "60"}
    chat_store.save_partial(
        engine, "r4", {"content": "The result", "tool_calls": [card], "citations": [], "usage": {}}
    )
    chat_store.save_partial(
        engine, "r4", {"content": "The result is 60 and", "tool_calls": [card], "citations": [], "usage": {}}
    )
    with sa.orm.Session(engine) as db:  # the finished call was settled while the run streamed
        db.add(_ledger_row("r4", "msg-1", 120, 9))
        db.commit()

    assert run_recovery.mark_running_interrupted(engine) == 1

    (message,) = chat_store.list_messages(engine, SESSION_4)
    assert message.status == "interrupted" and message.content == "The result is 60 and"
    assert [c["tool_call_id"] for c in message.tool_calls] == ["c1"]
    assert message.usage["input_tokens"] == 120 and message.usage["output_tokens"] == 9
    assert message.usage["model_calls"] == 1 and message.usage["cost_micros"] == 7
    run = chat_store.get_run(engine, "r4")
    assert run is not None and run.status == "interrupted" and run.partial is None
    assert (run.input_tokens, run.output_tokens) == (120, 9)


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
    first = chat_store.finalise_run(engine, "r5", "success", answer=answer, input_tokens=3, output_tokens=2)
    again = chat_store.finalise_run(engine, "r5", "success", answer=answer, input_tokens=3, output_tokens=2)
    assert (first, again) == (True, False)
    (message,) = chat_store.list_messages(engine, SESSION_4)
    assert message.content == "hello" and message.usage["input_tokens"] == 3
    run = chat_store.get_run(engine, "r5")
    assert run is not None and run.status == "success" and run.input_tokens == 3


SESSION_6 = "00000000-0000-0000-0000-000000000006"


def test_open_turn_writes_session_message_and_run_together_or_not_at_all(engine: sa.Engine) -> None:
    """Issue 18: one transaction for the turn's start; a failure leaves nothing half-written."""
    chat_store.open_turn(
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
        chat_store.open_turn(
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
    assert chat_store.finalise_run(engine, "waiting", "waiting_input")
    chat_store.open_turn(
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
    chat_store.open_turn(engine, run_id="keep", new_session=None, **turn)
    assert chat_store.get_session(engine, SESSION_6).route == "fast"  # type: ignore[union-attr]
    chat_store.finalise_run(engine, "keep", "success")
    chat_store.open_turn(engine, run_id="main", new_session=None, set_route=(None,), **turn)
    assert chat_store.get_session(engine, SESSION_6).route is None  # type: ignore[union-attr]


def test_save_partials_writes_running_runs_only(engine: sa.Engine) -> None:
    chat_store.create_session(engine, SESSION_6, "u", "t", "full")
    for run_id in ("a", "b", "done"):
        chat_store.start_run(engine, run_id, SESSION_6, "u", "trace", "chat")
    assert chat_store.finalise_run(engine, "done", "success")
    chat_store.save_partials(
        engine, {run_id: {"content": f"so far {run_id}", "tool_calls": []} for run_id in ("a", "b", "done")}
    )
    assert [chat_store.get_run(engine, r).partial for r in ("a", "b", "done")] == [  # type: ignore[union-attr]
        {"content": "so far a", "tool_calls": []},
        {"content": "so far b", "tool_calls": []},
        None,
    ]
