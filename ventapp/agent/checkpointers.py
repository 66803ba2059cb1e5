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
