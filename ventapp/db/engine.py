"""Database engine and schema migration (SQLModel + Alembic).

The app migrates its own database at start (``upgrade_to_head``), so a fresh
checkout or an upgraded deployment needs no manual step (``make migrate`` runs
``alembic upgrade head`` on its own), and ``alembic/`` is the only schema authority
(no ``create_all`` in the app).
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from ventapp.config import PROJECT_ROOT

DEFAULT_BUSY_TIMEOUT_S = 5.0
"""How long an SQLite write waits for another connection's lock (``DB_BUSY_TIMEOUT_S``)."""


def make_engine(database_url: str, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> Engine:
    """Create the engine; for SQLite make the folder, allow cross-thread use and enable WAL.

    Cross-thread use is needed because store calls run in ``asyncio.to_thread`` workers.

    Args:
        database_url: SQLAlchemy URL.
        busy_timeout_s: Seconds an SQLite statement waits for a lock held elsewhere before it
            raises ``OperationalError("database is locked")``. Short on purpose: a locked file
            must turn into a quick 503 or a parked answer, not a request hanging for 30 s.
    """
    connect_args: dict[str, object] = {}
    if database_url.startswith("sqlite:///"):
        Path(database_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        connect_args = {"check_same_thread": False, "timeout": busy_timeout_s}
    engine = sa.create_engine(database_url, connect_args=connect_args, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

    return engine


def probe_write(engine: Engine, timeout_s: float = 1.0) -> None:
    """Check that the database takes a write now, without changing anything. Blocking.

    Takes the write lock with a no-op ``UPDATE`` of ``alembic_version`` and rolls back, so a
    file locked by another connection (or read-only, or gone) fails here within ``timeout_s``
    even while reads still work (SQLite's WAL mode lets readers past a writer's lock).

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The database cannot be written.
    """
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as connection:
        try:
            if sqlite:
                connection.exec_driver_sql(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            connection.exec_driver_sql("UPDATE alembic_version SET version_num = version_num")
        finally:
            connection.rollback()
            if sqlite:  # its busy timeout is now the probe's: drop it rather than return it to the pool
                connection.invalidate()


def alembic_config(database_url: str) -> Config:
    """The Alembic config of this checkout, pointed at ``database_url``."""
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    config.set_main_option("sqlalchemy.url", database_url)
    return config


def pending_revision(engine: Engine, database_url: str) -> str | None:
    """The head revision when the database is behind it, else None."""
    head = ScriptDirectory.from_config(alembic_config(database_url)).get_current_head()
    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    return head if current != head else None


def upgrade_to_head(database_url: str) -> None:
    """Apply every pending Alembic revision (``alembic upgrade head``). Blocking: call in a thread."""
    command.upgrade(alembic_config(database_url), "head")
