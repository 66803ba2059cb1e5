"""The run log shared by every process: a Redis Stream per run (``REDIS_URL``; issue 14).

:class:`RedisRunLog` keeps the :class:`~ventapp.agent.run_log.RunLog` interface. The process that
runs a run writes every frame to its in-process :class:`~ventapp.agent.run_log.MemoryRunLog`
(its own clients read from there, as in a single process) and to Redis:

* ``ventagent:log:<run_id>`` — a Stream, one entry per frame with the explicit id ``<seq>-0``
  (``XADD … MAXLEN ~ RUN_LOG_MAX_FRAMES``), and an end marker ``<last seq>-1`` when the run ends;
* ``ventagent:logmeta:<run_id>`` — who the run belongs to, ``first_seq``, ``last_seq``, ``ended``;
* ``ventagent:logsession:<session_id>`` — the session's current run.

The Redis copy is written behind the run: :meth:`RedisRunLog.append` returns once the frame is in
the local log, and one writer task per run sends whatever frames have gathered meanwhile in one
pipeline (``XADD`` each, one ``HSET`` of ``last_seq``), so the run never waits for a round trip
per frame (it did: a token frame cost a Redis round trip on the run's path, issue 14's
benchmark); :meth:`RedisRunLog.close` waits for the writer before the end marker.

Another process joining the run reads ``XREAD`` from ``<after>-0`` (the backlog first, then
``BLOCK`` for live entries) until the end marker. Every key expires ``RUN_LOG_TTL_S`` after the
run ends (a day after it opened, should its process die first). When Redis fails mid-run the run
goes on: its local clients miss nothing, only joiners on other processes lose it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from ventapp.agent.events import EVENT_ADAPTER, ContractEvent
from ventapp.agent.run_log import LogFrame, LogGap, LoggedRun, LogState, MemoryRunLog, RunLog

logger = logging.getLogger(__name__)

PREFIX = "ventagent:"
RUNNING_EXPIRY_S = 86_400
"""How long a run's keys live if its process dies before closing it."""
READ_BLOCK_MS = 1000
"""Longest single ``XREAD BLOCK``: a reader notices an expired log within this."""


def _stream(run_id: str) -> str:
    return f"{PREFIX}log:{run_id}"


def _meta(run_id: str) -> str:
    return f"{PREFIX}logmeta:{run_id}"


def _session(session_id: str) -> str:
    return f"{PREFIX}logsession:{session_id}"


class RedisRunLog(RunLog):
    """A :class:`RunLog` readable from every process.

    Args:
        url: ``REDIS_URL``.
        ttl_s: ``RUN_LOG_TTL_S``.
        max_frames: ``RUN_LOG_MAX_FRAMES`` (Redis trims approximately, never below it).
    """

    def __init__(self, url: str, ttl_s: float = 60.0, max_frames: int = 100_000) -> None:
        import redis.asyncio as aioredis

        self.redis = aioredis.Redis.from_url(
            url, socket_timeout=READ_BLOCK_MS / 1000 + 4, socket_connect_timeout=2
        )
        self.local = MemoryRunLog(ttl_s, max_frames)
        self.ttl_s = ttl_s
        self.max_frames = max(1, max_frames)
        self._broken: set[str] = set()
        """Runs of this process whose Redis copy failed (they go on without it)."""
        self._first_seq: dict[str, int] = {}
        """Other processes' runs: the oldest kept seq seen by :meth:`current` (for the early gap check)."""
        self._pending: dict[str, list[tuple[int, str]]] = {}
        """This process's runs: ``(seq, event JSON)`` appended locally, not yet sent to Redis."""
        self._writers: dict[str, asyncio.Task[None]] = {}
        """This process's runs: the task sending ``_pending`` (at most one per run, so in order)."""

    def _failed(self, run_id: str, error: Exception) -> None:
        if run_id not in self._broken:
            self._broken.add(run_id)
            logger.warning("run %s: its frames cannot be written to Redis (%s); joins from other processes "
                           "will miss it", run_id, error)  # fmt: skip

    async def aclose(self) -> None:
        """Stop the writers and close the connection pool."""
        for writer in list(self._writers.values()):
            writer.cancel()
        await asyncio.gather(*self._writers.values(), return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    async def open(self, run: LoggedRun) -> int:
        """See :meth:`RunLog.open`; a run resumed here after pausing on another process numbers on
        after the paused part's last frame (read from its Stream), so a follower's ``Last-Event-ID``
        neither skips nor repeats frames."""
        after = await self.local.open(run, after=await self._last_seq_elsewhere(run.run_id))
        self._broken.discard(run.run_id)
        meta = {"session_id": run.session_id, "user_name": run.user_name, "trace_id": run.trace_id,
                "first_seq": after + 1, "last_seq": after, "ended": 0}  # fmt: skip
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.delete(_stream(run.run_id))
                pipe.hset(_meta(run.run_id), mapping=meta)
                pipe.expire(_meta(run.run_id), RUNNING_EXPIRY_S)
                pipe.set(_session(run.session_id), run.run_id, ex=RUNNING_EXPIRY_S)
                await pipe.execute()
        except Exception as error:
            self._failed(run.run_id, error)
        return after

    async def _last_seq_elsewhere(self, run_id: str) -> int:
        """The last ``seq`` Redis holds for ``run_id`` (0: none, or Redis unreachable)."""
        if run_id in self.local._runs:
            return 0  # paused here: this process's own log knows
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.xrevrange(_stream(run_id), count=1)
                pipe.hget(_meta(run_id), "last_seq")
                newest, recorded = await pipe.execute()
        except Exception as error:
            logger.warning(
                "run %s: its earlier frames' numbers cannot be read from Redis (%s)", run_id, error
            )
            return 0
        last = int(recorded) if recorded is not None else 0
        if newest:  # the end marker is "<last seq>-1"
            last = max(last, int(newest[0][0].split(b"-")[0]))
        return last

    async def append(self, run_id: str, event: ContractEvent) -> LogFrame:
        """See :meth:`RunLog.append`; the frame reaches Redis shortly after (the run's writer)."""
        frame = await self.local.append(run_id, event)
        if run_id not in self._broken:
            self._pending.setdefault(run_id, []).append((frame.seq, event.model_dump_json()))
            if run_id not in self._writers:
                self._writers[run_id] = asyncio.get_running_loop().create_task(
                    self._write(run_id), name=f"run-log-writer-{run_id}"
                )
        return frame

    async def _write(self, run_id: str) -> None:
        """Send the run's pending frames, a pipeline per batch, until none are left."""
        try:
            # No await between finding nothing pending and leaving: an append either lands in a
            # batch taken here or finds no writer and starts the next one.
            while batch := self._pending.pop(run_id, None):
                try:
                    async with self.redis.pipeline(transaction=False) as pipe:
                        for seq, data in batch:
                            pipe.xadd(_stream(run_id), {"e": data}, id=f"{seq}-0",
                                      maxlen=self.max_frames, approximate=True)  # fmt: skip
                        pipe.hset(_meta(run_id), "last_seq", batch[-1][0])
                        await pipe.execute()
                except Exception as error:
                    self._failed(run_id, error)
                    self._pending.pop(run_id, None)
                    return
        finally:
            self._writers.pop(run_id, None)

    async def _drain(self, run_id: str) -> None:
        """Wait until the run's frames so far are in Redis (or given up on)."""
        writer = self._writers.get(run_id)
        if writer is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(writer)

    async def close(self, run_id: str) -> None:
        """See :meth:`RunLog.close`."""
        state = self.local._runs.get(run_id)
        await self.local.close(run_id)
        await self._drain(run_id)
        if state is None or run_id in self._broken:
            return
        ttl = max(1, int(self.ttl_s))
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.xadd(_stream(run_id), {"end": "1"}, id=f"{state.last_seq}-1")
                pipe.hset(_meta(run_id), "ended", 1)
                for key in (_stream(run_id), _meta(run_id), _session(state.info.session_id)):
                    pipe.expire(key, ttl)
                await pipe.execute()
        except Exception as error:
            self._failed(run_id, error)

    async def current(self, session_id: str) -> LogState | None:
        """See :meth:`RunLog.current`: this process's run first, else the one Redis knows."""
        state = await self.local.current(session_id)
        if state is not None:
            return state
        raw = await self.redis.get(_session(session_id))
        if raw is None:
            return None
        run_id = raw.decode()
        meta = {k.decode(): v.decode() for k, v in (await self.redis.hgetall(_meta(run_id))).items()}
        if not meta:
            return None
        first_seq = int(meta["first_seq"])
        oldest = await self.redis.xrange(_stream(run_id), count=1)
        if oldest:
            first_seq = max(first_seq, int(oldest[0][0].split(b"-")[0]))
        self._first_seq[run_id] = first_seq
        run = LoggedRun(run_id, meta["session_id"], meta["user_name"], meta["trace_id"])
        return LogState(run, first_seq, int(meta["last_seq"]), meta["ended"] == "1")

    def batches(
        self, run_id: str, after: int = 0, *, idle_s: float = 0
    ) -> AsyncIterator[list[LogFrame] | None]:
        """See :meth:`RunLog.batches`. Another process's run is read from its Stream.

        A gap is raised here when :meth:`current` just saw the oldest kept frame, else on the
        first read; an unknown run raises ``KeyError`` on the first read. Each ``XREAD`` reply
        (up to 500 entries) comes as one list.
        """
        if run_id in self.local._runs:
            return self.local.batches(run_id, after, idle_s=idle_s)
        first = self._first_seq.get(run_id)
        if first is not None and after < first - 1:
            raise LogGap(first)
        return self._read(run_id, max(after, 0), idle_s)

    async def _read(self, run_id: str, after: int, idle_s: float) -> AsyncIterator[list[LogFrame] | None]:
        if not await self.redis.exists(_meta(run_id)):
            raise KeyError(run_id)
        cursor: Any = f"{after}-0"
        expected = after + 1
        quiet_since = time.monotonic()
        block = READ_BLOCK_MS if idle_s <= 0 else max(1, min(READ_BLOCK_MS, int(idle_s * 1000)))
        while True:
            batch = await self.redis.xread({_stream(run_id): cursor}, count=500, block=block)
            if not batch:
                if not await self.redis.exists(_meta(run_id)):
                    return  # expired: nothing more will come
                if idle_s > 0 and time.monotonic() - quiet_since >= idle_s:
                    quiet_since = time.monotonic()
                    yield None
                continue
            frames: list[LogFrame] = []
            for entry_id, fields in batch[0][1]:
                if b"end" in fields:
                    if frames:
                        yield frames
                    return
                seq = int(entry_id.split(b"-")[0])
                if seq > expected:  # trimmed while this reader was behind
                    raise LogGap(seq)
                frames.append(LogFrame(seq, EVENT_ADAPTER.validate_json(fields[b"e"])))
                cursor, expected = entry_id, seq + 1
            if frames:
                yield frames
            quiet_since = time.monotonic()
