"""What the run log costs a run: the in-process log against the Redis one (issue 14).

For each log, R runs of F token frames each are appended concurrently (C at a time, as a
process streaming C answers would) and closed; prints, per run, the wall time from the first
append to a finished ``close`` and the process CPU spent, median over the runs. The Redis log is
on a throwaway ``redis-server`` (tests/servers.py) on loopback. Run it in two checkouts for a
before/after: ``.venv/bin/python -m bench.bench_run_log [--frames 200] [--runs 40] [--concurrent 8]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

from tests.servers import RedisServer
from ventapp.agent import events as ev
from ventapp.agent.redis_run_log import RedisRunLog
from ventapp.agent.run_log import LoggedRun, MemoryRunLog, RunLog


async def _one(log: RunLog, frames: int) -> float:
    tag = uuid.uuid4().hex
    run = LoggedRun(run_id=tag, session_id=f"s-{tag}", user_name="bench", trace_id=tag)
    started = time.perf_counter()
    await log.open(run)
    for i in range(frames):
        await log.append(run.run_id, ev.Token(content=f"w{i} "))
    await log.close(run.run_id)
    return time.perf_counter() - started


async def _measure(log: RunLog, frames: int, runs: int, concurrent: int) -> tuple[float, float]:
    walls: list[float] = []
    cpu_started = time.process_time()
    for start in range(0, runs, concurrent):
        batch = min(concurrent, runs - start)
        walls += await asyncio.gather(*(_one(log, frames) for _ in range(batch)))
    cpu = (time.process_time() - cpu_started) / runs
    return statistics.median(walls), cpu


async def _main(frames: int, runs: int, concurrent: int) -> None:
    server = RedisServer().start()
    try:
        memory = await _measure(MemoryRunLog(), frames, runs, concurrent)
        redis_log = RedisRunLog(server.url)
        await _measure(redis_log, frames, concurrent, concurrent)  # warm-up: connections
        shared = await _measure(redis_log, frames, runs, concurrent)
        await redis_log.aclose()
    finally:
        server.stop()
    print(f"frames={frames} runs={runs} concurrent={concurrent}")
    for name, (wall, cpu) in (("memory", memory), ("redis", shared)):
        print(f"{name:7s} per run: wall p50 {wall * 1000:8.1f} ms, CPU {cpu * 1000:7.1f} ms")


def main() -> None:
    """Print the per-run cost of each log."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--concurrent", type=int, default=8)
    args = parser.parse_args()
    asyncio.run(_main(args.frames, args.runs, args.concurrent))


if __name__ == "__main__":
    main()
