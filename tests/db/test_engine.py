"""The relational store on SQLite, PostgreSQL and MariaDB: locked migrations, long texts, exact identities.

PostgreSQL and MariaDB are real throwaway servers (tests/servers.py); nothing is mocked.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

import ventapp.db.billing_models  # noqa: F401  (registers every table, as alembic/env.py does)
from ventapp.config import PROJECT_ROOT
from ventapp.db import chat_store, models, preference_models, schedule_models  # noqa: F401
from ventapp.db.engine import driver_url, include_object, make_engine, pending_revision, upgrade_to_head

# Each process imports everything, reports ready, and waits for "go": the five migrations start
# within milliseconds of each other (started plainly, imports alone would stagger them).
MIGRATE = """
import os, sys, time
from ventapp.db.engine import upgrade_to_head
open(sys.argv[2] + "." + str(os.getpid()), "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.005)
upgrade_to_head(sys.argv[1])
"""


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database on each engine."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'fresh.db'}"
    return request.getfixturevalue(f"{request.param}_server").create_database()


def test_five_processes_starting_at_once_migrate_a_fresh_database_once(
    fresh_url: str, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE, fresh_url, str(go)],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(5)
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("go.*"))) < 5 and time.monotonic() < deadline:
        time.sleep(0.02)
    go.touch()
    results = [(process.wait(120), process.stderr.read()) for process in processes]  # type: ignore[union-attr]

    assert [code for code, _ in results] == [0] * 5, [err[-800:] for code, err in results if code]
    engine = make_engine(fresh_url)
    assert pending_revision(engine, fresh_url) is None
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT COUNT(*) FROM alembic_version").scalar() == 1
    engine.dispose()


def test_driver_url_picks_the_installed_drivers() -> None:
    assert driver_url("postgresql://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert driver_url("postgres://h/db") == "postgresql+psycopg://h/db"
    assert driver_url("mysql://u@h/db") == "mysql+pymysql://u@h/db"
    assert driver_url("mariadb://u@h/db") == "mysql+pymysql://u@h/db"
    assert driver_url("postgresql+asyncpg://h/db") == "postgresql+asyncpg://h/db"
    assert driver_url("sqlite:///x.db") == "sqlite:///x.db"


@pytest.fixture(scope="module")
def maria(mariadb_server) -> sa.Engine:  # type: ignore[no-untyped-def]
    """A migrated MariaDB database; its URL carries an URL-encoded ``%`` in the password."""
    url = mariadb_server.create_database()
    assert "%25" in url
    upgrade_to_head(url)  # a bare "%" here used to stop Alembic's config interpolation
    engine = make_engine(url)
    yield engine
    engine.dispose()


def test_mariadb_keeps_a_message_of_100000_chinese_characters(maria: sa.Engine) -> None:
    session_id = str(uuid.uuid4())
    chat_store.create_session(maria, session_id, "ann", "long", "full")
    content = "风量" * 50_000

    chat_store.add_message(maria, session_id, "assistant", content)

    assert [m.content for m in chat_store.list_messages(maria, session_id)] == [content]


def test_mariadb_user_names_are_case_sensitive(maria: sa.Engine) -> None:
    chat_store.create_session(maria, str(uuid.uuid4()), "Alice", "hers", "full")

    assert chat_store.list_sessions(maria, "alice") == []
    assert [s.title for s in chat_store.list_sessions(maria, "Alice")] == ["hers"]


def test_alembic_leaves_the_checkpointers_tables_alone(postgres_server) -> None:  # type: ignore[no-untyped-def]
    url = postgres_server.create_database()
    upgrade_to_head(url)
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE checkpoints (thread_id TEXT PRIMARY KEY)")
        context = MigrationContext.configure(connection, opts={"include_object": include_object})
        diff = compare_metadata(context, SQLModel.metadata)
    engine.dispose()

    assert not [change for change in diff if change[0] == "remove_table"]


def test_a_sqlite_connection_is_not_pinged_at_each_checkout(tmp_path: Path) -> None:
    """Issue 18: the pool's ping ran a statement before every use of a local file's connection."""
    engine = make_engine(f"sqlite:///{tmp_path / 'ping.db'}")
    statements: list[str] = []

    @sa.event.listens_for(engine, "connect")
    def _trace(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.set_trace_callback(statements.append)

    with engine.connect() as connection:
        connection.exec_driver_sql("SELECT 2")
    statements.clear()
    for _ in range(3):
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT 2")
    assert statements == ["SELECT 2"] * 3, statements
    engine.dispose()
