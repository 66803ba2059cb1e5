"""Storage order and migrations (pitfall 8)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from ventapp.db import billing_models, chat_store, run_recovery, turn_writes
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
    turn_writes.save_partial(
        engine, "r4", {"content": "The result", "tool_calls": [card], "citations": [], "usage": {}}
    )
    turn_writes.save_partial(
        engine,
        "r4",
        {
            "content": "The result is 60 and",
            "reasoning": "Multiply first.\n\nThen say it",
            "tool_calls": [card],
            "citations": [],
            "usage": {},
        },
    )
    with sa.orm.Session(engine) as db:  # the finished call was settled while the run streamed
        db.add(_ledger_row("r4", "msg-1", 120, 9))
        db.commit()

    assert run_recovery.mark_running_interrupted(engine) == 1

    (message,) = chat_store.list_messages(engine, SESSION_4)
    assert message.status == "interrupted" and message.content == "The result is 60 and"
    assert message.reasoning == "Multiply first.\n\nThen say it", "the reasoning saved so far is kept too"
    assert [c["tool_call_id"] for c in message.tool_calls] == ["c1"]
    assert message.usage["input_tokens"] == 120 and message.usage["output_tokens"] == 9
    assert message.usage["model_calls"] == 1 and message.usage["cost_micros"] == 7
    run = chat_store.get_run(engine, "r4")
    assert run is not None and run.status == "interrupted" and run.partial is None
    assert (run.input_tokens, run.output_tokens) == (120, 9)


def _paused_turn(engine: sa.Engine, session_id: str, run_id: str, answer: str | None) -> None:
    """A turn whose run paused for a person, as the run writes it (``answer``: its text so far, if any)."""
    turn_writes.open_turn(
        engine,
        session_id=session_id,
        run_id=run_id,
        user_name="u",
        trace_id="trace",
        kind="chat",
        message="calculate 1+2",
        new_session=("u", "t", None) if run_id.endswith("1") else None,
    )
    saved = (
        {"session_id": session_id, "content": answer, "tool_calls": [], "citations": [], "usage": {}}
        | {"status": "waiting"}
        if answer is not None
        else None
    )
    turn_writes.finalise_run(engine, run_id, "waiting_input", answer=saved)


def test_session_waits_on_a_paused_run_with_or_without_an_answer(engine: sa.Engine) -> None:
    """The cheap check before the checkpoint is read for a pending interrupt (issue: send hot path)."""
    session = "00000000-0000-0000-0000-000000000009"
    assert chat_store.session_waits(engine, session) is False, "an unknown session waits on nothing"

    _paused_turn(engine, session, "run-1", "Let me calculate that.")
    assert chat_store.session_waits(engine, session) is True

    turn_writes.abandon_waiting_runs(engine, session)  # a new message instead of an answer
    assert chat_store.session_waits(engine, session) is False

    _paused_turn(engine, session, "run-2", None)  # paused before a word was written
    assert chat_store.session_waits(engine, session) is True
    assert chat_store.session_waits(engine, "00000000-0000-0000-0000-000000000010") is False


def test_session_mark_changes_with_every_turn_written_and_every_run_finalised(engine: sa.Engine) -> None:
    """A tab compares it before sending: a turn finished elsewhere must change it (tester's F3)."""
    session = "00000000-0000-0000-0000-000000000011"
    empty = chat_store.session_mark(engine, session)
    _paused_turn(engine, session, "run-1", "Let me calculate that.")
    paused = chat_store.session_mark(engine, session)
    assert paused != empty
    assert chat_store.session_mark(engine, session) == paused, "nothing written: the same mark"

    chat_store.reopen_waiting_run(engine, session)  # answered: the same answer row goes on
    turn_writes.finalise_run(
        engine,
        "run-1",
        "success",
        answer={"session_id": session, "content": " 3.", "tool_calls": [], "citations": [], "usage": {}}
        | {"status": "complete"},
    )
    resumed = chat_store.session_mark(engine, session)
    assert resumed != paused, "a resumed answer is updated in place; its run's end moves the mark"

    chat_store.add_message(engine, session, "user", "another turn")
    assert chat_store.session_mark(engine, session) not in {empty, paused, resumed}


def test_session_waits_on_a_pause_whose_end_is_parked_when_told_its_run(engine: sa.Engine) -> None:
    """A pause whose ``waiting_input`` end the database refused still reads ``running``: the
    caller names the parked runs (from the spool) and the check counts them, for their session only."""
    session, other = "00000000-0000-0000-0000-000000000011", "00000000-0000-0000-0000-000000000012"
    for sid, run_id in ((session, "run-p1"), (other, "run-p2")):
        turn_writes.open_turn(
            engine, session_id=sid, run_id=run_id, user_name="u", trace_id="t", kind="chat",
            message="calculate 1+2", new_session=("u", "t", None),
        )  # fmt: skip
    assert chat_store.session_waits(engine, session) is False, "a running run is no pause"
    assert chat_store.session_waits(engine, session, frozenset({"run-p1"})) is True
    assert chat_store.session_waits(engine, session, frozenset({"run-p2"})) is False, "another session's"
    assert chat_store.session_waits(engine, other, ["run-p1", "run-p2"]) is True


@pytest.mark.parametrize("engine_name", ["sqlite", "postgres", "mariadb"])
def test_revision_0013_adds_the_reasoning_column_and_keeps_the_messages(
    engine_name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Messages written before keep their text with no reasoning; a long reasoning fits (MariaDB's
    ``TEXT`` would stop at 64 KB); the downgrade takes the column away again."""
    from alembic import command

    from ventapp.db.engine import alembic_config

    if engine_name == "sqlite":
        url = f"sqlite:///{tmp_path / 'reasoning.db'}"
    else:
        url = request.getfixturevalue(f"{engine_name}_server").create_database()
    command.upgrade(alembic_config(url), "0012")
    engine = make_engine(url)
    try:
        chat_store.create_session(engine, SESSION_4, "u", "t", "full")
        # The table as revision 0012 left it (the model has the new column already).
        texts = [sa.column(name) for name in ("id", "session_id", "role", "content", "status")]
        lists = [sa.column(name, sa.JSON) for name in ("tool_calls", "citations", "usage")]
        messages = sa.table("chat_messages", *texts, *lists, sa.column("created_at", sa.DateTime))
        with engine.begin() as connection:
            connection.execute(
                sa.insert(messages).values(
                    id="m-old",
                    session_id=SESSION_4,
                    role="assistant",
                    content="old answer",
                    status="complete",
                    tool_calls=[],
                    citations=[],
                    usage={},
                    created_at=datetime(2026, 1, 1, 12, 0, 0),
                )
            )
        upgrade_to_head(url)
        (old,) = chat_store.list_messages(engine, SESSION_4)
        assert (old.content, old.reasoning) == ("old answer", None)
        chat_store.start_run(engine, "r13", SESSION_4, "u", "trace", "chat")
        thought = "风量" * 50_000  # 100,000 characters, 300 KB in UTF-8
        answer = {"session_id": SESSION_4, "content": "new", "reasoning": thought, "tool_calls": []}
        assert turn_writes.finalise_run(
            engine, "r13", "success", answer={**answer, "citations": [], "usage": {}, "status": "complete"}
        )
        assert [m.reasoning for m in chat_store.list_messages(engine, SESSION_4)] == [None, thought]

        command.downgrade(alembic_config(url), "0012")
        columns = {column["name"] for column in sa.inspect(engine).get_columns("chat_messages")}
        assert "reasoning" not in columns and "content" in columns
    finally:
        engine.dispose()
