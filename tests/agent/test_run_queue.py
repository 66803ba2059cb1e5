"""The run queue joins tokens that wait behind each other, and never holds a lone token back."""

from __future__ import annotations

import asyncio

from ventapp.agent import events as ev
from ventapp.agent.run_queue import RunQueue

END = object()


async def test_tokens_waiting_together_come_out_as_one_token_in_order() -> None:
    queue = RunQueue()
    for item in (ev.Token(content="Hel"), ev.Token(content="lo "), ev.Token(content="world"), END):
        queue.put_nowait(item)
    assert await queue.next() == ev.Token(content="Hello world")
    assert await queue.next() is END


async def test_a_non_token_keeps_its_place_between_joined_tokens() -> None:
    queue = RunQueue()
    tool = ev.ToolCall(tool="calculate", cn_tool="计算", args={}, tool_call_id="c1")
    for item in (
        ev.Token(content="a"),
        ev.Token(content="b"),
        tool,
        ev.Token(content="c"),
        ev.Token(content="d"),
    ):
        queue.put_nowait(item)
    assert [await queue.next() for _ in range(3)] == [ev.Token(content="ab"), tool, ev.Token(content="cd")]
    assert queue.empty()


async def test_a_lone_token_is_handed_over_at_once() -> None:
    queue = RunQueue()
    lone = ev.Token(content="first")
    queue.put_nowait(lone)
    assert await asyncio.wait_for(queue.next(), 0.5) is lone


async def test_next_waits_for_the_producer_when_nothing_is_queued() -> None:
    queue = RunQueue()
    waiting = asyncio.create_task(queue.next())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    queue.put_nowait(ev.Token(content="late"))
    assert await asyncio.wait_for(waiting, 1) == ev.Token(content="late")


async def test_a_consumer_cancelled_while_waiting_leaves_the_queue_usable() -> None:
    queue = RunQueue()
    waiting = asyncio.create_task(queue.next())
    await asyncio.sleep(0.01)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    queue.put_nowait(END)
    assert await asyncio.wait_for(queue.next(), 1) is END
