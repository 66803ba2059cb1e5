"""The per-run frame log: a run's numbered contract events, for whoever joins it (issue 11).

Every run writes its events here as it streams (:mod:`ventapp.agent.live_runs`), each with a
``seq`` number (1, 2, …). Clients read from it rather than from the run: the client that
started the run, a second browser tab opening the session, an API client that lost its
connection and comes back with ``Last-Event-ID``. The log of a run is kept while it runs and
for ``RUN_LOG_TTL_S`` seconds after it ends, bounded to ``RUN_LOG_MAX_FRAMES`` frames.

:class:`RunLog` is the one interface; :class:`MemoryRunLog` keeps it in this process. The
scale-out backs the same interface with a Redis Stream per run (``XADD MAXLEN ~`` for
:meth:`RunLog.append`, ``XRANGE`` then ``XREAD BLOCK`` for :meth:`RunLog.batches` — each
reply is a batch already —, a key per
session for :meth:`RunLog.current`, ``EXPIRE`` for the TTL) — nothing outside this module
knows which one it talks to.

A resumed run (the answer to an approval continues the same ``run_id``) opens its log
again: the paused part's frames are dropped and numbering goes on after them, so a
``seq`` never means two frames of one run.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ventapp.agent.events import ContractEvent


@dataclass(frozen=True)
class LoggedRun:
    """Who a logged run belongs to: what a joiner needs to check ownership and label frames."""

    run_id: str
    session_id: str
    user_name: str
    trace_id: str
    numbered_after: int = 0
    """A resumed run: its paused part's last ``seq`` as the database kept it (0: not known)."""


class LogFrame:
    """One numbered event of a run.

    Attributes:
        seq: Its number in the run, from 1.
        event: The contract event.
        encoded: A transport's cache of the frame's encoded form (the SSE encoder fills it
            once, so K followers of a run do not encode the same frame K times).
    """

    __slots__ = ("encoded", "event", "seq")

    def __init__(self, seq: int, event: ContractEvent) -> None:
        self.seq = seq
        self.event = event
        self.encoded: bytes | None = None


@dataclass(frozen=True)
class LogState:
    """Where a session's current (or just-finished) run stands.

    Attributes:
        run: The run.
        first_seq: The number of the oldest frame still kept (1 unless trimmed or resumed).
        last_seq: The number of its newest frame (``first_seq - 1`` before the first).
        ended: True once the run wrote its closing frame (``done``/``error``/``interrupt``).
    """

    run: LoggedRun
    first_seq: int
    last_seq: int
    ended: bool


class LogGap(Exception):
    """The frames a reader asked for are gone (trimmed by the bound, or a resume replaced them).

    Attributes:
        first_seq: The oldest frame still kept.
    """

    def __init__(self, first_seq: int) -> None:
        super().__init__(f"frames before {first_seq} are no longer kept")
        self.first_seq = first_seq


class RunLog(abc.ABC):
    """Numbered frames per run, readable while the run goes on and for a while after."""

    @abc.abstractmethod
    async def open(self, run: LoggedRun) -> int:
        """Start the run's log (or start it again for a resumed run); it becomes its session's current run.

        Returns:
            The ``seq`` just before the run's first new frame: 0 for a new run, the paused
            part's last number for a resumed one (read from there to get everything new).
        """

    @abc.abstractmethod
    async def append(self, run_id: str, event: ContractEvent) -> LogFrame:
        """Add one event; returns it numbered. Readers waiting for frames wake up.

        Raises:
            KeyError: The run's log was never opened, or has expired.
        """

    @abc.abstractmethod
    async def close(self, run_id: str) -> None:
        """The run ended: readers get the rest and stop; the log is dropped after the TTL."""

    @abc.abstractmethod
    async def current(self, session_id: str) -> LogState | None:
        """The session's running or recently ended run (within the TTL), or None."""

    @abc.abstractmethod
    def batches(
        self, run_id: str, after: int = 0, *, idle_s: float = 0
    ) -> AsyncIterator[list[LogFrame] | None]:
        """Like :meth:`frames`, but every frame already there comes at once, as one list.

        A reader that fell behind gets its backlog in one list (never empty), so a transport
        can write it in one go (one send instead of one per frame, issue 18); a reader that
        keeps up gets lists of one. ``None`` as in :meth:`frames`.

        Raises:
            KeyError: No log for that run (never opened, or expired).
            LogGap: Frames after ``after`` were trimmed (raised before anything is yielded).
        """

    def frames(self, run_id: str, after: int = 0, *, idle_s: float = 0) -> AsyncIterator[LogFrame | None]:
        """The frames numbered above ``after``, then the live ones as they come, until the run ends.

        Args:
            run_id: The run.
            after: The last ``seq`` the reader already has (0: from the start).
            idle_s: When > 0, ``None`` is yielded after that many seconds without a frame
                (a transport's cue for a keep-alive); 0 waits silently.

        Raises:
            KeyError: No log for that run (never opened, or expired).
            LogGap: Frames after ``after`` were trimmed (raised before anything is yielded).
        """
        return _one_by_one(self.batches(run_id, after, idle_s=idle_s))


def kept_batches(
    log: RunLog, run_id: str, after: int, *, idle_s: float = 0
) -> AsyncIterator[list[LogFrame] | None]:
    """:meth:`RunLog.batches` for a reader that named no frame: from ``after``, or from the oldest
    frame still kept if a trim passed ``after`` since the reader looked (F10), read again once.

    ``after`` is the oldest kept ``seq`` minus one as :meth:`RunLog.current` just reported it. The
    trim may pass it before the read: the memory log says so when asked, the Redis one on its first
    read (it is another process's Stream), so the gap is caught in both places, before any frame.

    Raises:
        KeyError: No log for that run (never opened, or expired).
        LogGap: Trimmed past the oldest kept frame again before the second read got there.
    """
    try:
        source = log.batches(run_id, after, idle_s=idle_s)
    except LogGap as gap:
        return log.batches(run_id, gap.first_seq - 1, idle_s=idle_s)
    return _again_if_gap_first(log, run_id, source, idle_s)


async def _again_if_gap_first(
    log: RunLog, run_id: str, source: AsyncIterator[list[LogFrame] | None], idle_s: float
) -> AsyncIterator[list[LogFrame] | None]:
    """``source``; when it reports a gap before its first frame, the kept frames instead (once)."""
    again = True
    while True:
        try:
            batch = await anext(source)
        except StopAsyncIteration:
            return
        except LogGap as gap:
            if not again:  # a frame went out, or this is the read again: a gap the reader fell into
                raise
            again = False
            source = log.batches(run_id, gap.first_seq - 1, idle_s=idle_s)
            continue
        again = again and not batch
        yield batch


async def _one_by_one(batches: AsyncIterator[list[LogFrame] | None]) -> AsyncIterator[LogFrame | None]:
    async for batch in batches:
        if batch is None:
            yield None
        else:
            for frame in batch:
                yield frame


class _Entry:
    """One run's frames in memory; ``frames[i].seq == first_seq + i``."""

    __slots__ = ("ended", "expiry", "first_seq", "frames", "info", "waiter")

    def __init__(self, info: LoggedRun, first_seq: int) -> None:
        self.info = info
        self.frames: list[LogFrame] = []
        self.first_seq = first_seq
        self.ended = False
        self.waiter: asyncio.Future[None] | None = None
        self.expiry: asyncio.TimerHandle | None = None

    @property
    def last_seq(self) -> int:
        return self.first_seq + len(self.frames) - 1

    def wake(self) -> None:
        # One future shared by every waiting reader, made only when someone waits, so an
        # append costs nothing per follower (O(1) per token, however many follow).
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class MemoryRunLog(RunLog):
    """The in-process :class:`RunLog` (one process per ``DATA_DIR``, invariant 2).

    Args:
        ttl_s: Seconds a run's log is kept after it ends (``RUN_LOG_TTL_S``).
        max_frames: Most frames kept per run (``RUN_LOG_MAX_FRAMES``); the oldest go first,
            a few thousand at a time, so trimming stays amortised O(1) per frame.
    """

    def __init__(self, ttl_s: float = 60.0, max_frames: int = 100_000) -> None:
        self.ttl_s = ttl_s
        self.max_frames = max(1, max_frames)
        self._trim_batch = max(1, self.max_frames // 8)
        self._runs: dict[str, _Entry] = {}
        self._sessions: dict[str, str] = {}

    def __len__(self) -> int:
        """Runs whose log is kept now (running or within the TTL)."""
        return len(self._runs)

    async def open(self, run: LoggedRun, *, after: int = 0) -> int:
        """See :meth:`RunLog.open`; a resumed run numbers on after its paused part.

        Args:
            run: The run.
            after: The last ``seq`` the run already used elsewhere (its paused part ran on another
                process: :class:`~ventapp.agent.redis_run_log.RedisRunLog`); numbering goes on
                after the larger of this and what this process kept.
        """
        previous = self._runs.get(run.run_id)
        first_seq = max(
            previous.last_seq + 1 if previous is not None else 1, after + 1, run.numbered_after + 1
        )
        if previous is not None:
            if previous.expiry is not None:
                previous.expiry.cancel()
            previous.ended = True
            previous.wake()
        self._runs[run.run_id] = _Entry(run, first_seq)
        self._sessions[run.session_id] = run.run_id
        return first_seq - 1

    async def append(self, run_id: str, event: ContractEvent) -> LogFrame:
        """See :meth:`RunLog.append`."""
        entry = self._runs[run_id]
        frame = LogFrame(entry.last_seq + 1, event)
        entry.frames.append(frame)
        if len(entry.frames) > self.max_frames:
            drop = len(entry.frames) - self.max_frames + self._trim_batch
            del entry.frames[:drop]
            entry.first_seq += drop
        entry.wake()
        return frame

    async def close(self, run_id: str) -> None:
        """See :meth:`RunLog.close`."""
        entry = self._runs.get(run_id)
        if entry is None or entry.ended:
            return
        entry.ended = True
        entry.wake()
        loop = asyncio.get_running_loop()
        entry.expiry = loop.call_later(self.ttl_s, self._expire, run_id, entry)

    def _expire(self, run_id: str, entry: _Entry) -> None:
        if self._runs.get(run_id) is entry:
            del self._runs[run_id]
            if self._sessions.get(entry.info.session_id) == run_id:
                del self._sessions[entry.info.session_id]

    async def current(self, session_id: str) -> LogState | None:
        """See :meth:`RunLog.current`."""
        run_id = self._sessions.get(session_id)
        entry = self._runs.get(run_id) if run_id is not None else None
        if entry is None:
            return None
        return LogState(run=entry.info, first_seq=entry.first_seq, last_seq=entry.last_seq, ended=entry.ended)

    def batches(
        self, run_id: str, after: int = 0, *, idle_s: float = 0
    ) -> AsyncIterator[list[LogFrame] | None]:
        """See :meth:`RunLog.batches`; the checks happen here, before the first ``await``."""
        entry = self._runs.get(run_id)
        if entry is None:
            raise KeyError(run_id)
        # Asking from before a resumed part's first frame is a gap too: those frames are gone.
        if after < entry.first_seq - 1:
            raise LogGap(entry.first_seq)
        return self._read(entry, max(after, 0), idle_s)

    async def _read(self, entry: _Entry, after: int, idle_s: float) -> AsyncIterator[list[LogFrame] | None]:
        loop = asyncio.get_running_loop()
        while True:
            start = after + 1 - entry.first_seq
            if start < 0:
                # Trimmed while this reader lagged behind by more than the bound.
                raise LogGap(entry.first_seq)
            if start < len(entry.frames):
                batch = entry.frames[start:]
                after = batch[-1].seq
                yield batch
                continue
            if entry.ended:
                return
            if entry.waiter is None:
                entry.waiter = loop.create_future()
            waiter = entry.waiter
            if idle_s <= 0:
                await asyncio.shield(waiter)
                continue
            try:
                async with asyncio.timeout(idle_s):
                    # Shielded: one reader's timeout must not cancel the future the others wait on.
                    await asyncio.shield(waiter)
            except TimeoutError:
                yield None
