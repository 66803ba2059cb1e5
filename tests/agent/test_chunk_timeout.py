"""The model stream's per-chunk timeout and its hand-over of the loop, kept by the product (issue 18).

langchain-openai bounds the wait for each streamed chunk with ``asyncio.wait_for``, which starts a
task per chunk on Python 3.11 (a quarter of a bare graph's streaming CPU here).
:func:`~ventapp.agent.openai_compat.chunks_within` keeps the same rule, value and error with one
timer per stream; :func:`~ventapp.agent.openai_compat.handing_over` lets the tokens of a burst
out as it is parsed (which the per-chunk task did as a side effect). These tests hold the rule,
the hand-over, and that no ``wait_for`` runs per chunk any more.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_openai import StreamChunkTimeoutError
from langchain_openai.chat_models import _client_utils

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.errors import classify
from ventapp.agent.openai_compat import CompatChatOpenAI, chunks_within, handing_over


async def _items(gaps_s: list[float], closed: list[bool]) -> AsyncIterator[int]:
    try:
        for index, gap in enumerate(gaps_s):
            await asyncio.sleep(gap)
            yield index
    finally:
        closed.append(True)


async def test_a_silence_longer_than_the_bound_raises_langchains_error_and_closes_the_stream() -> None:
    closed: list[bool] = []
    received: list[int] = []
    started = time.monotonic()
    with pytest.raises(StreamChunkTimeoutError) as caught:
        async for item in chunks_within(_items([0, 0, 5], closed), 0.1, "scripted-demo"):
            received.append(item)
    assert received == [0, 1]
    assert caught.value.chunks_received == 2 and caught.value.model_name == "scripted-demo"
    assert time.monotonic() - started < 2, "the bound, not the source's silence, ended the wait"
    assert closed == [True]
    assert classify(caught.value).code == "model_unreachable"


async def test_gaps_within_the_bound_pass_every_item_and_no_bound_means_none() -> None:
    assert [item async for item in chunks_within(_items([0.05] * 4, []), 0.5, None)] == [0, 1, 2, 3]
    assert [item async for item in chunks_within(_items([0.05, 0.2], []), None, None)] == [0, 1]


async def test_the_task_goes_on_after_a_timeout_and_time_spent_between_waits_does_not_count() -> None:
    with pytest.raises(StreamChunkTimeoutError):
        async for _ in chunks_within(_items([0, 5], []), 0.1, None):
            pass
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0, "the watch's cancellation was withdrawn"
    await asyncio.sleep(0.01)  # and no cancellation is left to land later

    received = []
    async for item in chunks_within(_items([0, 0.02, 0.02], []), 0.1, None):
        received.append(item)
        await asyncio.sleep(0.25)  # the consumer is slow; each wait for the source is short
    assert received == [0, 1, 2]


async def test_a_long_stream_arms_one_timer_not_one_per_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = asyncio.get_running_loop()
    armed: list[float] = []
    real_call_at = loop.call_at

    def counting_call_at(when: float, *args: object, **kwargs: object) -> asyncio.TimerHandle:
        armed.append(when)
        return real_call_at(when, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loop, "call_at", counting_call_at)
    received = [item async for item in chunks_within(_items([0] * 500, []), 30, None)]
    assert len(received) == 500 and len(armed) == 1


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    closed: list[bool] = []

    async def consume() -> None:
        async for _ in chunks_within(_items([0, 5], closed), 10, None):
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed == [True]


async def test_a_burst_reaches_another_task_as_it_is_parsed_the_first_words_at_once() -> None:
    """A source that never waits (a whole answer in one socket read) must not starve the reader."""
    read: list[int] = []
    seen: list[tuple[int, int]] = []  # (chunk, chunks read by then)
    queue: asyncio.Queue[int | None] = asyncio.Queue()

    async def burst() -> AsyncIterator[ChatGenerationChunk]:
        for index in range(41):
            until = time.monotonic() + 0.0005  # parsing a chunk takes CPU, never a wait
            while time.monotonic() < until:
                pass
            read.append(index)
            # The first chunk names the role and says nothing, as OpenAI's first chunk does.
            yield ChatGenerationChunk(message=AIMessageChunk(content=f"w{index} " if index else ""))

    async def reader() -> None:
        while (item := await queue.get()) is not None:
            seen.append((item, len(read)))

    task = asyncio.create_task(reader())
    async for chunk in handing_over(burst()):
        queue.put_nowait(int(chunk.text[1:]) if chunk.text else 0)
    queue.put_nowait(None)
    await task
    assert [item for item, _ in seen] == list(range(41))
    assert seen[:2] == [(0, 1), (1, 2)], "the first words go out before the next chunk is parsed"
    batches = sorted({count for _, count in seen})
    assert len(batches) >= 6, f"a 20 ms burst goes out every few ms, not at its end: {batches}"
    assert len(batches) < 30, f"not a loop pass per chunk either: {batches}"


async def test_the_sources_own_timeout_error_is_not_taken_for_the_bound() -> None:
    async def failing() -> AsyncIterator[int]:
        yield 1
        raise TimeoutError("the source's own")

    with pytest.raises(TimeoutError, match="the source's own") as caught:
        async for _ in chunks_within(failing(), 10, None):
            pass
    assert not isinstance(caught.value, StreamChunkTimeoutError)


@pytest.fixture
def slow_llm() -> Iterator[ScriptedServer]:
    with ScriptedServer(delay_ms=400) as server:
        yield server


@pytest.mark.parametrize("compat", ["strict", "lenient"])
async def test_a_stalled_model_stream_ends_with_the_timeout_and_no_task_per_chunk(
    slow_llm: ScriptedServer, compat: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wait_fors: list[object] = []
    real_wait_for = asyncio.wait_for

    def counting_wait_for(*args: object, **kwargs: object) -> object:
        wait_fors.append(args)
        return real_wait_for(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_client_utils.asyncio, "wait_for", counting_wait_for)
    model = CompatChatOpenAI(
        model="scripted-demo",
        base_url=slow_llm.base_url,
        api_key="scripted",
        max_retries=0,
        compat=compat,
        stream_chunk_timeout=0.15,
    )
    assert model.stream_chunk_timeout is None, "langchain-openai's per-chunk wait_for is off"

    with pytest.raises(StreamChunkTimeoutError) as caught:
        async for _ in model.astream([HumanMessage(content="hello")]):
            pass
    assert caught.value.timeout_s == 0.15 and caught.value.chunks_received >= 1

    slow_llm.delay_ms = 20
    answer = [chunk.text async for chunk in model.astream([HumanMessage(content="hello")])]
    assert "".join(answer), "a stream within the bound streams"
    assert wait_fors == [], "no asyncio.wait_for (a task on Python 3.11) per chunk"
