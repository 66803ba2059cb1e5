"""The per-run frame log (issue 11): numbering, followers, joins after the end, TTL, bound, resume."""

from __future__ import annotations

import asyncio

import pytest

from ventapp.agent import events as ev
from ventapp.agent.run_log import LogGap, LoggedRun, MemoryRunLog, kept_batches

RUN = LoggedRun(run_id="run-1", session_id="sess-1", user_name="ann", trace_id="t-1")


def token(i: int) -> ev.Token:
    return ev.Token(content=f"w{i} ")


async def read_all(log: MemoryRunLog, after: int = 0, run_id: str = RUN.run_id) -> list[int]:
    return [frame.seq async for frame in log.frames(run_id, after) if frame is not None]


async def test_frames_are_numbered_from_one_and_a_late_reader_gets_the_rest_then_the_end() -> None:
    log = MemoryRunLog()
    await log.open(RUN)
    for i in range(5):
        await log.append(RUN.run_id, token(i))
    reader = asyncio.create_task(read_all(log, after=2))
    await asyncio.sleep(0)
    for i in range(5, 8):
        await log.append(RUN.run_id, token(i))
    await log.close(RUN.run_id)

    assert await asyncio.wait_for(reader, 2) == [3, 4, 5, 6, 7, 8]
    state = await log.current(RUN.session_id)
    assert state is not None and (state.first_seq, state.last_seq, state.ended) == (1, 8, True)


async def test_ten_followers_each_see_every_frame_once_in_order() -> None:
    log = MemoryRunLog()
    await log.open(RUN)
    readers = [asyncio.create_task(read_all(log)) for _ in range(10)]
    for i in range(200):
        await log.append(RUN.run_id, token(i))
        if i % 7 == 0:
            await asyncio.sleep(0)  # let followers catch up part of the way, as a live run does
    await log.close(RUN.run_id)

    results = await asyncio.wait_for(asyncio.gather(*readers), 2)
    assert all(seqs == list(range(1, 201)) for seqs in results)


async def test_a_finished_run_is_joinable_until_the_ttl_then_gone() -> None:
    log = MemoryRunLog(ttl_s=0.2)
    await log.open(RUN)
    await log.append(RUN.run_id, token(0))
    await log.close(RUN.run_id)

    assert await read_all(log) == [1]
    await asyncio.sleep(0.3)
    assert await log.current(RUN.session_id) is None and len(log) == 0
    with pytest.raises(KeyError):
        log.frames(RUN.run_id)


async def test_the_bound_drops_the_oldest_frames_and_a_reader_asking_for_them_hears_so() -> None:
    log = MemoryRunLog(max_frames=16)
    await log.open(RUN)
    for i in range(40):
        await log.append(RUN.run_id, token(i))
    await log.close(RUN.run_id)

    state = await log.current(RUN.session_id)
    assert state is not None and state.last_seq == 40 and 40 - state.first_seq + 1 <= 16
    with pytest.raises(LogGap) as gap:
        log.frames(RUN.run_id, after=0)
    assert gap.value.first_seq == state.first_seq
    assert await read_all(log, after=state.first_seq - 1) == list(range(state.first_seq, 41))


async def test_a_join_naming_no_frame_reads_from_the_oldest_kept_after_a_trim_passed_what_it_saw() -> None:
    """F10: the route read ``first_seq`` from :meth:`current`, then the trim moved on."""
    log = MemoryRunLog(max_frames=16)
    await log.open(RUN)
    await log.append(RUN.run_id, token(0))
    seen = await log.current(RUN.session_id)
    for i in range(1, 40):
        await log.append(RUN.run_id, token(i))
    await log.close(RUN.run_id)
    assert seen is not None and seen.first_seq == 1
    kept = [
        f.seq async for batch in kept_batches(log, RUN.run_id, seen.first_seq - 1) if batch for f in batch
    ]
    state = await log.current(RUN.session_id)
    assert state is not None and kept == list(range(state.first_seq, 41)) and state.first_seq > 1


async def test_a_resumed_run_numbers_on_and_its_paused_part_is_gone() -> None:
    log = MemoryRunLog()
    await log.open(RUN)
    for i in range(3):
        await log.append(RUN.run_id, token(i))
    await log.append(RUN.run_id, ev.Interrupt(kind="plan", message="plan"))
    await log.close(RUN.run_id)

    await log.open(RUN)  # the answer to the card continues the same run
    await log.append(RUN.run_id, token(9))
    await log.close(RUN.run_id)

    assert await read_all(log, after=4) == [5]
    with pytest.raises(LogGap):
        log.frames(RUN.run_id, after=2)


async def test_silence_yields_none_for_keepalives_and_a_new_run_becomes_current() -> None:
    log = MemoryRunLog()
    await log.open(RUN)
    frames = log.frames(RUN.run_id, idle_s=0.05)
    assert await asyncio.wait_for(anext(frames), 1) is None
    await log.append(RUN.run_id, token(0))
    assert (await asyncio.wait_for(anext(frames), 1)).seq == 1  # type: ignore[union-attr]
    await frames.aclose()

    second = LoggedRun(run_id="run-2", session_id=RUN.session_id, user_name="ann", trace_id="t-2")
    await log.open(second)
    state = await log.current(RUN.session_id)
    assert state is not None and state.run.run_id == "run-2" and state.last_seq == 0
