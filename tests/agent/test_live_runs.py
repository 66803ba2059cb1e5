"""Waiting for a live run's end (ventapp/agent/live_runs.py): what a refused tab does (tester's F2)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from tests.agent.test_run_log import RUN, token
from ventapp.agent.live_runs import until_closed
from ventapp.agent.run_log import MemoryRunLog


class CountingLog(MemoryRunLog):
    """Counts the batches readers take (each is one wake of a reader)."""

    reads = 0

    def batches(self, run_id: str, after: int = 0, *, idle_s: float = 0) -> AsyncIterator[Any]:
        inner = super().batches(run_id, after, idle_s=idle_s)

        async def counted() -> AsyncIterator[Any]:
            async for batch in inner:
                self.reads += 1
                yield batch

        return counted()


async def test_waiting_for_the_end_takes_the_backlog_in_a_few_reads_not_one_per_token() -> None:
    log = CountingLog()
    await log.open(RUN)
    waiter = asyncio.create_task(until_closed(log, RUN.run_id, 0, pace_s=0.2))
    for i in range(300):
        await log.append(RUN.run_id, token(i))
        await asyncio.sleep(0)  # the waiter could wake after every token
    assert not waiter.done(), "the run goes on"

    await log.close(RUN.run_id)
    await asyncio.wait_for(waiter, 2)
    assert log.reads <= 5, f"{log.reads} reads for 300 tokens"


async def test_waiting_for_a_run_whose_log_is_gone_returns_at_once() -> None:
    log = MemoryRunLog()
    await asyncio.wait_for(until_closed(log, "no-such-run", 0), 1)
    await log.open(RUN)
    await log.append(RUN.run_id, token(0))
    await log.close(RUN.run_id)
    await asyncio.wait_for(until_closed(log, RUN.run_id, 1), 1)
