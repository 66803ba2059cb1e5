"""Admission control shared by every run (spec 002, "执行可靠性与隔离"; invariant 2).

* :class:`RunGate` — at most ``MAX_CONCURRENT_RUNS`` runs in the process and
  ``MAX_RUNS_PER_USER`` per user; over either the caller gets 429 with ``retry_after``.
* :class:`ProcessGuard` — the gate counts, the session locks and the SQLite checkpointer
  live in this process; a second process on the same ``DATA_DIR`` would split all three.
  An advisory file lock detects that and logs a WARNING naming them.
"""

from __future__ import annotations

import fcntl
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 5
"""Seconds a client is told to wait after a 429 from the gate (a typical short run)."""

SPLIT_STATE = (
    "the SQLite checkpointer (a session continued in another process would not see its graph state)",
    "the concurrency gate counts (limits would apply per process, not in total)",
    "the session locks (two runs of one session at once; scheduled ticks are claimed in the database)",
)


class GateFull(Exception):
    """The gate refused a run. ``scope`` is ``process`` or ``user``; ``retry_after`` in seconds."""

    def __init__(self, scope: str, limit: int, retry_after: int = RETRY_AFTER_S) -> None:
        super().__init__(f"{scope} run limit {limit} reached")
        self.scope = scope
        self.limit = limit
        self.retry_after = retry_after


@dataclass
class RunGate:
    """Counts runs in flight. Not thread-safe: used only from the event loop (single process)."""

    max_total: int
    max_per_user: int
    _total: int = 0
    _by_user: dict[str, int] = field(default_factory=dict)

    def acquire(self, user_name: str) -> GateSlot:
        """Take a slot for ``user_name``.

        Raises:
            GateFull: The process or the user is at its limit.
        """
        if self._total >= self.max_total:
            raise GateFull("process", self.max_total)
        if self._by_user.get(user_name, 0) >= self.max_per_user:
            raise GateFull("user", self.max_per_user)
        self._total += 1
        self._by_user[user_name] = self._by_user.get(user_name, 0) + 1
        return GateSlot(self, user_name)

    def _release(self, user_name: str) -> None:
        self._total -= 1
        left = self._by_user.get(user_name, 1) - 1
        if left:
            self._by_user[user_name] = left
        else:
            self._by_user.pop(user_name, None)

    @property
    def in_flight(self) -> int:
        """Runs holding a slot now."""
        return self._total

    def user_in_flight(self, user_name: str) -> int:
        """Runs ``user_name`` holds now."""
        return self._by_user.get(user_name, 0)


@dataclass
class GateSlot:
    """One taken slot; :meth:`release` is idempotent."""

    gate: RunGate
    user_name: str
    released: bool = False

    def release(self) -> None:
        """Give the slot back (once)."""
        if not self.released:
            self.released = True
            self.gate._release(self.user_name)


class ProcessGuard:
    """Holds an exclusive advisory lock on ``DATA_DIR/.runtime.lock`` while the runtime is open."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / ".runtime.lock"
        self._fd: int | None = None
        self.exclusive = False

    def acquire(self) -> bool:
        """Try the lock; on failure log one WARNING naming the state that would split.

        Returns:
            True when this is the only process using ``DATA_DIR``.
        """
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.exclusive = True
        except BlockingIOError:
            logger.warning(
                "another process is already serving DATA_DIR=%s: run a single worker (workers=1). "
                "Three pieces of state are per process and would split: %s",
                self.path.parent,
                "; ".join(SPLIT_STATE),
            )
        return self.exclusive

    def release(self) -> None:
        """Drop the lock (closing the descriptor releases it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self.exclusive = False
