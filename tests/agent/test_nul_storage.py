"""Machine-made text holding NUL (U+0000) is stored as U+FFFD on every backend (tester try19).

PostgreSQL refuses NUL in ``text`` columns (``psycopg.DataError``); an answer that held one
failed its final save, was parked in the spool and failed its write-back every 5 s forever.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from ventapp.agent.writeback import RUN, write_back
from ventapp.db import chat_store, turn_writes
from ventapp.db.engine import make_engine, upgrade_to_head
from ventapp.db.models import ExecutionRun
from ventapp.db.spool import Spool

SESSION = "00000000-0000-0000-0000-00000000a001"
NUL_ANSWER = {
    "session_id": SESSION,
    "content": "an\x00swer",
    "reasoning": "thought\x00",
    "tool_calls": [
        {"tool_call_id": "c1", "tool": "read_file", "args": {"file_path": "/w/\x00.txt"}, "content": "a\x00b"}
    ],
    "citations": [{"url": "/kb/x", "title": "t\x00", "snippet": "s"}],
    "usage": {"input_tokens": 1},
    "status": "complete",
}


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'nul.db'}"
    else:
        url = request.getfixturevalue("postgres_server").create_database()
    upgrade_to_head(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


def _open(engine: sa.Engine, run_id: str, session_id: str = SESSION) -> None:
    turn_writes.open_turn(
        engine, session_id=session_id, run_id=run_id, user_name="u", trace_id="t", kind="chat",
        message="read it", new_session=("t", "full", None),
    )  # fmt: skip


def _status(engine: sa.Engine, run_id: str) -> str:
    with engine.connect() as connection:
        table = ExecutionRun.__table__
        return str(connection.execute(sa.select(table.c.status).where(table.c.id == run_id)).scalar())


def _assert_replaced(engine: sa.Engine, run_id: str) -> None:
    saved = chat_store.run_answer(engine, run_id)
    assert saved is not None
    assert saved.content == "an\ufffdswer" and saved.reasoning == "thought\ufffd"
    (card,) = saved.tool_calls
    assert card["content"] == "a\ufffdb" and card["args"] == {"file_path": "/w/\ufffd.txt"}
    assert saved.citations[0]["title"] == "t\ufffd"


def test_a_final_save_with_nul_in_answer_tool_result_and_error_is_stored(store: sa.Engine) -> None:
    _open(store, "run-nul-1")
    turn_writes.save_partial(store, "run-nul-1", {k: v for k, v in NUL_ANSWER.items() if k != "session_id"})
    done = turn_writes.finalise_run(
        store, "run-nul-1", "failed", answer=NUL_ANSWER, error="tool said \x00", error_code="tool"
    )
    assert done is not None and done.content == "an\ufffdswer"
    _assert_replaced(store, "run-nul-1")
    with store.connect() as connection:
        table = ExecutionRun.__table__
        error = connection.execute(sa.select(table.c.error).where(table.c.id == "run-nul-1")).scalar()
    assert error == "tool said \ufffd" and _status(store, "run-nul-1") == "failed"


def test_a_parked_answer_with_nul_writes_back(store: sa.Engine, tmp_path: Path) -> None:
    """The spool keeps the NUL (JSON ``\\u0000``); its write-back must heal, not fail forever."""
    session = "00000000-0000-0000-0000-00000000a002"
    _open(store, "run-nul-2", session)
    spool = Spool(tmp_path / "spool.jsonl")
    spool.append(
        RUN,
        {
            "run_id": "run-nul-2",
            "status": "success",
            "answer": {**NUL_ANSWER, "session_id": session},
            "finished_at": "2026-12-03T07:00:00",
        },
    )
    report = write_back(store, spool)
    assert spool.count() == 0, report
    assert _status(store, "run-nul-2") == "success"
    _assert_replaced(store, "run-nul-2")
