"""The graph-state store (checkpointer) named by ``CHECKPOINTER``: sqlite, memory or postgres.

``postgres`` is the scale-out store: every process reads and writes each session's graph state
in one PostgreSQL database (``CHECKPOINT_URL``, or ``DATABASE_URL`` when that is PostgreSQL),
through ``langgraph-checkpoint-postgres`` on a psycopg pool. Its tables (``checkpoints``,
``checkpoint_blobs``, ``checkpoint_writes``, ``checkpoint_migrations``) may share the app's
database: Alembic leaves them alone (``ventapp.db.engine.include_object``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import sqlalchemy as sa
from langgraph.checkpoint.memory import InMemorySaver

from ventapp.agent.sqlite_saver import OneTripSqliteSaver
from ventapp.config import Settings
from ventapp.db.engine import driver_url, lock_key

POOL_MAX_SIZE = 10
"""Connections per process to the checkpoint database (each run holds one only while it reads or writes)."""


def libpq_url(database_url: str) -> str:
    """``database_url`` as libpq takes it: ``postgresql+psycopg://u:p@h/db`` → ``postgresql://u:p@h/db``."""
    url = sa.make_url(driver_url(database_url)).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


@contextlib.asynccontextmanager
async def postgres_checkpointer(database_url: str) -> AsyncIterator[Any]:
    """An ``AsyncPostgresSaver`` on a pool of autocommit connections, its tables set up. Closes the pool.

    ``setup()`` (create or upgrade its tables) runs under a PostgreSQL advisory lock, so several
    processes starting on a fresh database do not race each other's ``CREATE TABLE``.

    Args:
        database_url: A PostgreSQL URL (SQLAlchemy or libpq spelling).

    Raises:
        psycopg.OperationalError: The database cannot be reached.
    """
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    # The saver needs autocommit and dict rows; prepare_threshold=0 keeps it working behind
    # PgBouncer in transaction mode (no server-side prepared statements).
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    pool = AsyncConnectionPool(
        libpq_url(database_url), min_size=1, max_size=POOL_MAX_SIZE, kwargs=kwargs, open=False
    )
    await pool.open(wait=True, timeout=30)
    try:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        async with pool.connection() as lock_conn:
            key = lock_key("checkpointer-setup")
            # Polled, not a blocking pg_advisory_lock: setup() builds indexes CONCURRENTLY, which
            # waits for every open statement, a blocked lock request included (a silent deadlock).
            while True:  # the lock is another process's: no event here to wait on
                row = await (
                    await lock_conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,))
                ).fetchone()
                if row and row["ok"]:
                    break
                await asyncio.sleep(0.1)
            try:
                await saver.setup()
            finally:
                await lock_conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        yield saver
    finally:
        await pool.close()


async def open_checkpointer(settings: Settings, stack: contextlib.AsyncExitStack) -> Any:
    """The checkpointer ``settings.checkpointer`` names, entered on ``stack`` (closed with it)."""
    if settings.checkpointer == "memory":
        return InMemorySaver()
    if settings.checkpointer == "postgres":
        return await stack.enter_async_context(postgres_checkpointer(settings.checkpoint_url))
    checkpointer = await stack.enter_async_context(
        OneTripSqliteSaver.from_conn_string(str(settings.checkpoint_path))
    )
    # One connection and one lock serve every run's checkpoint reads and writes; with an fsync
    # per commit each write held that lock ~4x longer (issue 18). WAL + NORMAL keeps every commit
    # through a crash of the app (CHECKPOINT_SYNC).
    await checkpointer.conn.execute(f"PRAGMA synchronous={settings.checkpoint_sync.upper()}")
    return checkpointer


def rename_checkpoint_owner(settings: Settings, old: str, new: str) -> int:
    """Rewrite the owner (``metadata.user_name``) of every checkpoint ``old``'s runs saved to ``new``.

    For ``python -m ventapp.auth rename-user``: blocking, on its own connection, in one
    transaction. Graph state is keyed by thread (the session id, which does not change); only
    the metadata names the user: LangGraph copies the run's ``configurable`` plain values
    (``user_name``, ``mode``, ``ui_lang`` …) into every checkpoint it saves. ``memory`` keeps nothing across
    processes, so there is nothing to rewrite.

    Args:
        settings: The app's settings (``CHECKPOINTER``, its file or URL, ``DB_BUSY_TIMEOUT_S``).
        old: The name as stored.
        new: The name to write.

    Returns:
        How many checkpoints changed.

    Raises:
        sqlite3.Error | psycopg.Error: The checkpoint store refused; nothing changed.
    """
    if settings.checkpointer == "memory":
        return 0
    if settings.checkpointer == "postgres":
        return _rename_in_postgres(settings.checkpoint_url, old, new)
    path = settings.checkpoint_path
    if not path.exists():
        return 0
    import sqlite3

    connection = sqlite3.connect(path, timeout=settings.db_busy_timeout_s)
    try:
        with connection:  # one transaction: commits, or rolls back on an error
            if not connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'"
            ).fetchone():
                return 0
            # The saver stores metadata as UTF-8 JSON in a BLOB: read and write it as text.
            cursor = connection.execute(
                "UPDATE checkpoints SET metadata = CAST(json_set(CAST(metadata AS TEXT), '$.user_name', ?)"
                " AS BLOB) WHERE json_extract(CAST(metadata AS TEXT), '$.user_name') = ?",
                (new, old),
            )
            return int(cursor.rowcount)
    finally:
        connection.close()


def _rename_in_postgres(url: str, old: str, new: str) -> int:
    import psycopg

    with psycopg.connect(libpq_url(url)) as connection:  # one transaction, committed on exit
        found = connection.execute("SELECT to_regclass('checkpoints') IS NOT NULL").fetchone()
        if not found or not found[0]:
            return 0
        cursor = connection.execute(
            "UPDATE checkpoints SET metadata = jsonb_set(metadata, '{user_name}', to_jsonb(%s::text))"
            " WHERE metadata->>'user_name' = %s",
            (new, old),
        )
        return int(cursor.rowcount)
