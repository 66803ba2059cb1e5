"""Database engine and schema migration (SQLModel + Alembic).

The app migrates its own database at start (``upgrade_to_head``), so a fresh
checkout or an upgraded deployment needs no manual step (``make migrate`` runs
``alembic upgrade head`` on its own), and ``alembic/`` is the only schema authority
(no ``create_all`` in the app).

Besides the SQLite default, ``DATABASE_URL`` may name PostgreSQL (``postgresql://`` runs on
psycopg 3) or MySQL/MariaDB (``mysql://`` runs on PyMySQL). Several processes may start on
one database at once: :func:`upgrade_to_head` migrates under a database-wide lock
(:func:`migration_lock`), so exactly one applies the revisions and the others find them done.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from ventapp.config import PROJECT_ROOT, SettingError
from ventapp.config_urls import unreachable
from ventapp.db.sqlite_writes import QueuedWriteConnection, write_lock

DEFAULT_BUSY_TIMEOUT_S = 5.0
"""How long an SQLite write waits for another connection's lock (``DB_BUSY_TIMEOUT_S``)."""


MIGRATION_LOCK_TIMEOUT_S = 600
"""How long a starting process waits for another one's migration before it gives up."""

_DRIVERS = {
    "postgres": "postgresql+psycopg",
    "postgresql": "postgresql+psycopg",
    "mysql": "mysql+pymysql",
    "mariadb": "mysql+pymysql",
}


def driver_url(database_url: str) -> str:
    """``database_url`` with the driver this project installs (psycopg 3, PyMySQL) when it names none.

    ``postgresql://u@h/db`` → ``postgresql+psycopg://u@h/db``; ``mysql://…``/``mariadb://…`` →
    ``mysql+pymysql://…``. URLs naming a driver (``+…``) and SQLite URLs are returned as they are.
    """
    scheme, sep, rest = database_url.partition("://")
    return f"{_DRIVERS[scheme]}://{rest}" if sep and scheme in _DRIVERS else database_url


def lock_key(name: str) -> int:
    """A stable signed 64-bit key for ``name`` (PostgreSQL advisory locks take a ``bigint``)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextlib.contextmanager
def database_lock(
    database_url: str, name: str, timeout_s: float = MIGRATION_LOCK_TIMEOUT_S
) -> Iterator[None]:
    """Hold a lock named ``name`` that every process on this database shares. Blocking.

    PostgreSQL: a session advisory lock (``pg_advisory_lock``); MySQL/MariaDB: ``GET_LOCK``;
    SQLite: an ``fcntl`` lock on a file next to the database (processes on one host share it).
    The lock is held on a connection of its own and released when the block ends (or the
    process dies: the server drops a dead session's locks, the kernel a dead process's).

    Raises:
        TimeoutError: MySQL did not grant the lock within ``timeout_s``.
        sqlalchemy.exc.SQLAlchemyError: The database cannot be reached.
    """
    url = sa.make_url(driver_url(database_url))
    if url.get_backend_name() == "sqlite":
        path = Path(url.database or "ventagent.db")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{path}.{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the lock
        return
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            if engine.dialect.name == "postgresql":
                connection.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": lock_key(name)})
                try:
                    yield
                finally:
                    connection.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key(name)})
            else:
                got = connection.execute(
                    sa.text("SELECT GET_LOCK(:n, :t)"), {"n": f"ventagent.{name}"[:64], "t": int(timeout_s)}
                ).scalar()
                if got != 1:
                    raise TimeoutError(f"database lock {name!r} not granted within {timeout_s} s")
                try:
                    yield
                finally:
                    connection.execute(sa.text("SELECT RELEASE_LOCK(:n)"), {"n": f"ventagent.{name}"[:64]})
    finally:
        engine.dispose()


CONNECT_TIMEOUT_S = 10
"""How long the start-up probe (:func:`check_reachable`) waits for a database server to answer."""


def check_reachable(database_url: str, key: str = "DATABASE_URL") -> None:
    """Connect once to a database server, so a server that is not there fails the start in one line.

    Without it the first connection (the migration's lock) raised from deep inside the driver,
    and the server printed that traceback twice, 170–335 lines for a wrong port. SQLite files
    pass: opening one is the migration's own first step.

    Args:
        database_url: ``DATABASE_URL`` or ``CHECKPOINT_URL``.
        key: The setting it came from (named in the message).

    Raises:
        SettingError: The server refused or did not answer within :data:`CONNECT_TIMEOUT_S`
            (the message names ``key``, the URL without its password, and the driver's reason).
    """
    url = sa.make_url(driver_url(database_url))
    if url.get_backend_name() == "sqlite":
        return
    engine = sa.create_engine(
        url, poolclass=sa.pool.NullPool, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
    )
    try:
        with engine.connect():
            pass
    except sa.exc.DBAPIError as exc:  # OperationalError, InterfaceError: the driver's own words
        raise SettingError(unreachable(key, database_url, exc)) from None
    finally:
        engine.dispose()


def check_databases_at_start(database_url: str, checkpoint_url: str | None = None) -> None:
    """:func:`check_reachable` for a program's start (``rxconfig.py``): one line and exit 2 when not.

    Run before Reflex prints its banner: from the server's start the line came after "App running
    at:" and a worker's "Unexpected exit", where operators miss it. SQLite URLs return at once.

    Args:
        database_url: ``DATABASE_URL``.
        checkpoint_url: ``CHECKPOINT_URL`` when it names another server, else None.

    Raises:
        SystemExit: 2, with the line :func:`check_reachable` words (:func:`~ventapp.config.exit_on_bad_setting`).
    """
    from ventapp.config import exit_on_bad_setting

    try:
        check_reachable(database_url)
        if checkpoint_url is not None and checkpoint_url != database_url:
            check_reachable(checkpoint_url, "CHECKPOINT_URL")
    except SettingError as bad:
        exit_on_bad_setting(str(bad))


def include_object(
    _object: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Alembic's ``include_object`` hook: only our tables take part in autogenerate.

    Tables that share the database but are not in our metadata (the graph checkpointer's
    ``checkpoints``, ``checkpoint_blobs``, …) must never show up as "drop table".
    """
    return not (type_ == "table" and reflected and compare_to is None)


def make_engine(
    database_url: str, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S, queue_writes: bool = True
) -> Engine:
    """Create the engine; for SQLite make the folder, allow cross-thread use and enable WAL.

    Cross-thread use is needed because store calls run in ``asyncio.to_thread`` workers. The
    engine's SQLite connections queue for the write lock in the process (``sqlite_writes``).

    Args:
        database_url: SQLAlchemy URL.
        busy_timeout_s: Seconds an SQLite statement waits for a lock held elsewhere before it
            raises ``OperationalError("database is locked")``. Short on purpose: a locked file
            must turn into a quick 503 or a parked answer, not a request hanging for 30 s.
        queue_writes: SQLite: this process's writers wait in line for the write lock
            (:mod:`ventapp.db.sqlite_writes`); False leaves them to SQLite's polling busy
            handler (``bench/bench_sqlite_writes.py`` compares the two).
    """
    database_url = driver_url(database_url)
    connect_args: dict[str, object] = {}
    if database_url.startswith("sqlite:///"):
        Path(database_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        connect_args = {
            "check_same_thread": False,
            "timeout": busy_timeout_s,
            "factory": QueuedWriteConnection,
        }
    # MySQL closes idle connections after wait_timeout (8 h by default): recycle before that, and
    # ping a server's connection before use. A SQLite file has no connection to lose: the ping
    # would be a statement on every checkout, five a turn (issue 18).
    engine = sa.create_engine(
        database_url,
        connect_args=connect_args,
        pool_pre_ping=not database_url.startswith("sqlite"),
        pool_recycle=3600,
    )
    if engine.dialect.name == "sqlite":

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()
            if queue_writes and isinstance(dbapi_connection, QueuedWriteConnection):
                # One process's writers queue in the process instead of polling SQLite's lock.
                dbapi_connection.queue_writes(write_lock(engine.url.database or ""), busy_timeout_s)

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
                raw = connection.connection.dbapi_connection
                if isinstance(raw, QueuedWriteConnection):  # and as long in this process's queue
                    raw.wait_at_most(timeout_s)
            connection.exec_driver_sql("UPDATE alembic_version SET version_num = version_num")
        finally:
            connection.rollback()
            if sqlite:  # its busy timeout is now the probe's: drop it rather than return it to the pool
                connection.invalidate()


def alembic_config(database_url: str) -> Config:
    """The Alembic config of this checkout, pointed at ``database_url``."""
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    # Alembic's config is a ConfigParser: a bare "%" (an URL-encoded password: p%40ss) would be
    # read as interpolation and stop the migration.
    config.set_main_option("sqlalchemy.url", driver_url(database_url).replace("%", "%%"))
    return config


def pending_revision(engine: Engine, database_url: str) -> str | None:
    """The head revision when the database is behind it, else None."""
    head = ScriptDirectory.from_config(alembic_config(database_url)).get_current_head()
    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    return head if current != head else None


def upgrade_to_head(database_url: str) -> None:
    """Apply every pending Alembic revision (``alembic upgrade head``). Blocking: call in a thread.

    ``alembic/env.py`` runs the revisions under :func:`database_lock` ("migrate"), for this call
    and for the ``alembic`` command alike: when several processes start on one fresh database,
    one migrates and the others wait, then find nothing pending.
    """
    command.upgrade(alembic_config(database_url), "head")
