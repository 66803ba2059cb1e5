"""Database engine and schema migration (SQLModel + Alembic).

The app migrates its own database at start (``upgrade_to_head``), so a fresh
checkout or an upgraded deployment needs no manual step; ``make run`` also runs
``alembic upgrade head`` first, and ``alembic/`` is the only schema authority
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


def make_engine(database_url: str) -> Engine:
    """Create the engine; for SQLite make the folder, allow cross-thread use and enable WAL.

    Cross-thread use is needed because store calls run in ``asyncio.to_thread`` workers.
    """
    connect_args: dict[str, object] = {}
    if database_url.startswith("sqlite:///"):
        Path(database_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        connect_args = {"check_same_thread": False, "timeout": 30}
    engine = sa.create_engine(database_url, connect_args=connect_args, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

    return engine


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
