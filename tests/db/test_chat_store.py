"""Storage order and migrations (pitfall 8)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from ventapp.db import chat_store
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
    assert chat_store.mark_running_interrupted(engine) == 1
    run = chat_store.get_run(engine, "r1")
    assert run is not None and run.status == "interrupted"
    (trace,) = chat_store.list_messages(engine, "00000000-0000-0000-0000-000000000003")
    assert trace.role == "assistant" and trace.status == "interrupted" and trace.run_id == "r1"
