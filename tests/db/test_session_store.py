"""Session store: owner scoping, literal title search, one-transaction deletes, the runs window."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from ventapp.db import chat_store, session_store
from ventapp.db.engine import make_engine, upgrade_to_head


@pytest.fixture
def engine(tmp_path: Path) -> sa.Engine:
    url = f"sqlite:///{tmp_path / 'test.db'}"
    upgrade_to_head(url)
    return make_engine(url)


def _session(engine: sa.Engine, title: str, user: str = "ann") -> str:
    session_id = str(uuid.uuid4())
    chat_store.create_session(engine, session_id, user, title, "full")
    return session_id


def test_like_pattern_escapes_wildcards() -> None:
    assert session_store.like_pattern("50%_a\\b") == "%50\\%\\_a\\\\b%"


def test_search_is_owner_scoped_case_insensitive_and_literal(engine: sa.Engine) -> None:
    for title in ("Fan 100% load", "Fan 1000 load", "back\\slash", "其他 风机"):
        _session(engine, title)
    _session(engine, "fan of bob", user="bob")

    def titles(query: str) -> list[str]:
        return sorted(row.title for row in session_store.search_sessions(engine, "ann", query))

    assert titles("FAN") == ["Fan 100% load", "Fan 1000 load"]
    assert titles("100%") == ["Fan 100% load"]
    assert titles("_") == []
    assert titles("\\") == ["back\\slash"]
    assert titles("风机") == ["其他 风机"]


def test_update_and_delete_refuse_other_users(engine: sa.Engine) -> None:
    session_id = _session(engine, "mine")
    chat_store.add_message(engine, session_id, "user", "hello")
    chat_store.start_run(engine, str(uuid.uuid4()), session_id, "ann", "t", "chat")

    assert session_store.update_session(engine, session_id, "bob", title="stolen") is None
    assert session_store.delete_session(engine, session_id, "bob") is False
    assert session_store.get_owned_session(engine, session_id, "bob") is None
    updated = session_store.update_session(engine, session_id, "ann", title="renamed", pinned=True)
    assert updated is not None and (updated.title, updated.pinned) == ("renamed", True)
    with pytest.raises(ValueError, match="id"):
        session_store.update_session(engine, session_id, "ann", id="other")

    assert session_store.delete_session(engine, session_id, "ann") is True
    assert chat_store.list_messages(engine, session_id) == []
    assert list(session_store.list_runs(engine, session_id)) == []


def test_runs_are_the_latest_fifty_newest_first(engine: sa.Engine) -> None:
    session_id = _session(engine, "busy")
    run_ids = [str(uuid.uuid4()) for _ in range(55)]
    for run_id in run_ids:
        chat_store.start_run(engine, run_id, session_id, "ann", "t", "chat")

    runs = session_store.list_runs(engine, session_id, 50)

    assert [run.id for run in runs] == run_ids[::-1][:50]


def test_last_assistant_usage_skips_messages_without_usage(engine: sa.Engine) -> None:
    session_id = _session(engine, "usage")
    assert session_store.last_assistant_usage(engine, session_id) == {}
    chat_store.add_message(engine, session_id, "assistant", "a", usage={"context_tokens": 42})
    chat_store.add_message(engine, session_id, "assistant", "b")
    assert session_store.last_assistant_usage(engine, session_id) == {"context_tokens": 42}
