"""SQLite writers of one process queue for the database's write lock instead of polling for it (issue 18).

SQLite lets one connection write at a time. A second writer does not queue: its busy handler
sleeps and retries (1, 2, 5, … up to 100 ms between tries), so under load — twenty runs admitted,
saved and settled at once — writers slept 140–380 ms at the median for a lock that was free most
of that time, and the luckiest poller, not the first in line, got it next.

Here every connection of an engine to one database file takes a first-come, first-served
process-wide lock (:class:`FifoLock`) just before the statement that opens its write transaction
(the ``INSERT``/``UPDATE``/``DELETE``/``REPLACE`` before which Python's ``sqlite3`` emits
``BEGIN``), and hands it to the next writer the moment it commits or rolls back. Reads take no
lock (WAL lets them run beside the writer). Other processes on the same file still meet the busy
handler, as before. A writer that waits longer than the busy timeout gets the same
``OperationalError("database is locked")`` SQLite would have raised.
"""

from __future__ import annotations

import collections
import sqlite3
import threading
from pathlib import Path
from typing import Any

_WRITES = ("insert", "update", "delete", "replace")
"""Statements before which ``sqlite3`` (legacy transaction control) begins a transaction."""


class FifoLock:
    """A lock granted in the order it was asked for; any thread may release it.

    ``threading.Lock`` wakes an arbitrary waiter; here a release hands the lock straight to the
    longest waiter, so writers are served in arrival order.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held = False
        self._waiters: collections.deque[threading.Lock] = collections.deque()

    @property
    def waiting(self) -> int:
        """How many threads wait for the lock now."""
        return len(self._waiters)

    def acquire(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` seconds for the lock; True when this caller holds it."""
        with self._mutex:
            if not self._held:
                self._held = True
                return True
            turn = threading.Lock()
            turn.acquire()
            self._waiters.append(turn)
        if turn.acquire(timeout=max(timeout_s, 0.0)):
            return True  # the holder handed it over
        with self._mutex:
            try:
                self._waiters.remove(turn)
            except ValueError:
                return True  # handed over between the timeout and this line: ours now
            return False

    def release(self) -> None:
        """Hand the lock to the longest waiter, or free it."""
        with self._mutex:
            if self._waiters:
                self._waiters.popleft().release()  # stays held, now by the next writer
            else:
                self._held = False


_LOCKS: dict[str, FifoLock] = {}
_LOCKS_GUARD = threading.Lock()


def write_lock(database: str) -> FifoLock:
    """The process's write lock for the SQLite file ``database`` (one per resolved path)."""
    key = str(Path(database).resolve())
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, FifoLock())


class QueuedWriteConnection(sqlite3.Connection):
    """``sqlite3.Connection`` that holds its file's :class:`FifoLock` for each write transaction.

    Pass as ``factory=`` to ``sqlite3.connect`` (SQLAlchemy: ``connect_args``), then
    :meth:`queue_writes` once connected; until then it behaves as a plain connection.
    """

    _lock: FifoLock | None = None
    _timeout_s = 5.0
    _holding = False

    def queue_writes(self, lock: FifoLock, timeout_s: float) -> None:
        """From now on, take ``lock`` (waiting at most ``timeout_s`` s) before a write transaction."""
        self._lock, self._timeout_s = lock, timeout_s

    def wait_at_most(self, timeout_s: float) -> None:
        """Wait at most ``timeout_s`` seconds in the queue from now on (a quick probe's limit)."""
        self._timeout_s = timeout_s

    def cursor(self, factory: Any = None) -> sqlite3.Cursor:
        return super().cursor(factory or _QueuedWriteCursor)

    def _before(self, sql: str) -> None:
        if self._lock is None or self._holding or self.in_transaction:
            return
        if not sql.lstrip()[:7].lower().startswith(_WRITES):
            return
        if not self._lock.acquire(self._timeout_s):
            raise sqlite3.OperationalError("database is locked")
        self._holding = True

    def _release(self) -> None:
        if self._holding and not self.in_transaction:
            self._holding = False
            assert self._lock is not None
            self._lock.release()

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self._release()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self._release()

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._holding:
                self._holding = False
                assert self._lock is not None
                self._lock.release()


class _QueuedWriteCursor(sqlite3.Cursor):
    connection: QueuedWriteConnection

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.connection._before(sql)
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        self.connection._before(sql)
        return super().executemany(sql, parameters)
