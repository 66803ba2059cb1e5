"""SQLite writers of one process queue in arrival order and all succeed (issue 18)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import sqlalchemy as sa

from ventapp.db.engine import make_engine, probe_write, upgrade_to_head
from ventapp.db.sqlite_writes import FifoLock, write_lock


def _wait_for_waiters(lock: FifoLock, count: int) -> None:
    deadline = time.monotonic() + 2
    while lock.waiting < count and time.monotonic() < deadline:
        time.sleep(0.005)


def test_concurrent_writers_all_commit_in_arrival_order(tmp_path: Path) -> None:
    """Writers that come while one holds the lock all commit, none 'database is locked', first come first."""
    path = tmp_path / "app.db"
    engine = make_engine(f"sqlite:///{path}", busy_timeout_s=30)
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE log (id INTEGER PRIMARY KEY AUTOINCREMENT, writer INTEGER)"))
    lock = write_lock(str(path))
    errors: list[BaseException] = []

    def write(
        writer: int, holding: threading.Event | None = None, hold: threading.Event | None = None
    ) -> None:
        try:
            with engine.begin() as connection:
                connection.execute(sa.text("INSERT INTO log (writer) VALUES (:w)"), {"w": writer})
                if holding is not None and hold is not None:
                    holding.set()
                    hold.wait(60)
                connection.execute(sa.text("UPDATE log SET writer = writer WHERE writer = :w"), {"w": writer})
        except BaseException as exc:
            errors.append(exc)

    holding, release = threading.Event(), threading.Event()
    first = threading.Thread(target=write, args=(0, holding, release))
    first.start()
    assert holding.wait(10)  # the first writer is inside its write transaction
    threads = [first]
    for writer in range(1, 10):  # within the pool (5 + 10 overflow)
        thread = threading.Thread(target=write, args=(writer,))
        thread.start()
        _wait_for_waiters(lock, writer)  # this one is in line before the next one starts
        threads.append(thread)
    release.set()
    for thread in threads:
        thread.join(30)
    assert errors == []
    with engine.connect() as connection:
        order = [row[0] for row in connection.execute(sa.text("SELECT writer FROM log ORDER BY id"))]
    assert order == list(range(10))
    assert lock.waiting == 0
    assert lock.acquire(0)  # free again
    lock.release()
    engine.dispose()


def test_a_writer_waiting_past_the_busy_timeout_gets_database_is_locked(tmp_path: Path) -> None:
    """The queue keeps SQLite's contract: past ``busy_timeout_s`` a writer fails, and the lock is not lost."""
    path = tmp_path / "app.db"
    engine = make_engine(f"sqlite:///{path}", busy_timeout_s=0.2)
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE t (x INTEGER)"))
    with engine.connect() as holder:
        holder.execute(sa.text("INSERT INTO t VALUES (1)"))
        with engine.connect() as late:
            try:
                late.execute(sa.text("INSERT INTO t VALUES (2)"))
            except sa.exc.OperationalError as exc:
                assert "database is locked" in str(exc)
            else:
                raise AssertionError("the second writer did not time out")
        holder.commit()
    with engine.begin() as connection:  # the lock went back when the holder committed
        connection.execute(sa.text("INSERT INTO t VALUES (3)"))
        assert connection.execute(sa.text("SELECT x FROM t ORDER BY x")).scalars().all() == [1, 3]
    engine.dispose()


def test_reads_do_not_wait_for_a_writer(tmp_path: Path) -> None:
    """WAL readers run beside an open write transaction (only writers queue)."""
    path = tmp_path / "app.db"
    engine = make_engine(f"sqlite:///{path}", busy_timeout_s=0.2)
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE t (x INTEGER)"))
        connection.execute(sa.text("INSERT INTO t VALUES (1)"))
    with engine.connect() as holder:
        holder.execute(sa.text("INSERT INTO t VALUES (2)"))
        with engine.connect() as reader:
            assert reader.execute(sa.text("SELECT count(*) FROM t")).scalar() == 1
        holder.rollback()
    engine.dispose()


def test_the_write_probe_keeps_its_own_short_limit_in_the_queue(tmp_path: Path) -> None:
    """``probe_write`` waits its ``timeout_s`` behind an in-process writer, not the engine's busy timeout."""
    path = tmp_path / "app.db"
    upgrade_to_head(f"sqlite:///{path}")
    engine = make_engine(f"sqlite:///{path}", busy_timeout_s=60)
    outcome: list[BaseException | None] = []

    def probe() -> None:
        try:
            probe_write(engine, timeout_s=0.2)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    with engine.connect() as holder:
        holder.execute(sa.text("UPDATE alembic_version SET version_num = version_num"))
        thread = threading.Thread(target=probe)
        thread.start()
        thread.join(20)  # far below the engine's 60 s
        finished = not thread.is_alive()
        holder.rollback()
    thread.join(60)
    assert finished
    assert isinstance(outcome[0], sa.exc.OperationalError) and "database is locked" in str(outcome[0])
    probe_write(engine, timeout_s=0.2)  # free again: the probe's failed wait did not keep the lock
    engine.dispose()
