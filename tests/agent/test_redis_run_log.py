"""The run log shared through Redis (issue 14): one real Redis, several "processes" (RedisRunLog instances)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ventapp.agent import events as ev
from ventapp.agent.redis_run_log import RedisRunLog
from ventapp.agent.run_log import LogFrame, LoggedRun, RunLog, kept_batches


@pytest.fixture
async def logs(redis_server: Any) -> AsyncIterator[tuple[RedisRunLog, RedisRunLog, RedisRunLog]]:
    """Processes A, B and C on one Redis."""
    opened = [RedisRunLog(redis_server.url, ttl_s=30) for _ in range(3)]
    yield opened[0], opened[1], opened[2]
    for log in opened:
        await log.aclose()


def _run() -> LoggedRun:
    tag = uuid.uuid4().hex[:8]
    return LoggedRun(run_id=f"run-{tag}", session_id=f"sess-{tag}", user_name="ann", trace_id=f"t-{tag}")


async def _seqs(log: RunLog, run_id: str, after: int) -> list[int]:
    return [frame.seq async for frame in log.frames(run_id, after) if frame is not None]


async def _seqs_of(batches: AsyncIterator[list[LogFrame] | None]) -> list[int]:
    return [frame.seq async for batch in batches if batch is not None for frame in batch]


async def test_a_run_resumed_on_another_process_numbers_on_and_a_follower_misses_and_repeats_nothing(
    logs: tuple[RedisRunLog, RedisRunLog, RedisRunLog],
) -> None:
    a, b, c = logs
    run = _run()
    assert await a.open(run) == 0
    for i in range(3):
        await a.append(run.run_id, ev.Token(content=f"w{i} "))
    await a.append(run.run_id, ev.Interrupt(kind="plan", message="plan"))
    await a.close(run.run_id)  # paused on a card after frame 4; its answer reaches process B

    resumed_after = await b.open(run)
    follower = asyncio.create_task(_seqs(c, run.run_id, after=4))  # Last-Event-ID: 4, on a third process
    await asyncio.sleep(0.2)
    frames = [await b.append(run.run_id, ev.Token(content=f"v{i} ")) for i in range(2)]
    await b.close(run.run_id)

    assert resumed_after == 4
    assert [frame.seq for frame in frames] == [5, 6]
    assert await asyncio.wait_for(follower, 10) == [5, 6]
    state = await c.current(run.session_id)
    assert state is not None and (state.last_seq, state.ended) == (6, True)


async def test_frames_written_behind_the_run_reach_a_follower_elsewhere_all_in_order(
    logs: tuple[RedisRunLog, RedisRunLog, RedisRunLog],
) -> None:
    a, b, _ = logs
    run = _run()
    await a.open(run)
    follower = asyncio.create_task(_seqs(b, run.run_id, after=0))
    for i in range(300):  # no await on Redis per frame: they gather and go in batches
        await a.append(run.run_id, ev.Token(content=f"w{i} "))
    await a.close(run.run_id)  # waits for the writer, then the end marker

    assert await asyncio.wait_for(follower, 10) == list(range(1, 301))
    assert [frame.seq async for frame in b.frames(run.run_id, after=295) if frame is not None] == [
        296, 297, 298, 299, 300,
    ]  # fmt: skip


async def test_a_join_naming_no_frame_starts_at_the_oldest_kept_even_when_a_trim_passes_it(
    redis_server: Any,
) -> None:
    """F10 on Redis: a join without ``Last-Event-ID``/``after`` reads what is kept, never a gap."""
    a = RedisRunLog(redis_server.url, ttl_s=30, max_frames=16)
    b, c = RedisRunLog(redis_server.url, ttl_s=30), RedisRunLog(redis_server.url, ttl_s=30)
    try:
        run = _run()
        await a.open(run)
        for i in range(300):
            await a.append(run.run_id, ev.Token(content=f"w{i} "))
        await a._drain(run.run_id)
        joined = await c.current(run.session_id)  # process C: the join route's first read
        assert joined is not None and joined.first_seq > 1, "Redis trimmed the oldest frames"
        first = await asyncio.wait_for(anext(kept_batches(c, run.run_id, joined.first_seq - 1)), 10)
        assert first is not None and first[0].seq == joined.first_seq and first[-1].seq == 300

        stale = await c.current(run.session_id)
        assert stale is not None
        for i in range(300):  # the run goes on between that read and the join's own read
            await a.append(run.run_id, ev.Token(content=f"v{i} "))
        await a.close(run.run_id)
        now = await b.current(run.session_id)  # what Redis keeps now
        assert now is not None and now.first_seq > stale.first_seq, "the trim passed what C saw"

        source = kept_batches(c, run.run_id, stale.first_seq - 1)
        seqs = await asyncio.wait_for(_seqs_of(source), 10)
        assert seqs[-1] == 600 and seqs == list(range(seqs[0], 601)) and seqs[0] > stale.first_seq
    finally:
        for log in (a, b, c):
            await log.aclose()
