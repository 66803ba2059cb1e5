"""Durability benchmark: what saving the answer as it grows costs (issue 17 item 4).

Prints two things:

1. ``save_partial`` latency (ms, p50/p95) on a real SQLite file for answers of 1,000,
   10,000 and 100,000 characters — the write a streaming run makes every
   ``ANSWER_SAVE_INTERVAL_S`` in a background thread (never on the event loop);
2. per chat turn, in-process through the real pipeline: the process CPU time (ms) and the
   number of partial saves, with saving off (``0``), every second (the default) and every
   0.1 s. The scripted model runs in its own process and streams a 200-token answer at
   10 ms per token (~2 s), so the CPU figure is the pipeline's own.

Run: ``.venv/bin/python -m bench.bench_durability [--turns 5]``. Loopback only; temporary
data folders; nothing is left behind.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.e2e.reflex_app import free_port
from tests.support import app_env
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import PROJECT_ROOT, load_settings
from ventapp.db import chat_store, turn_writes
from ventapp.db.engine import make_engine, upgrade_to_head

PROMPT = "long answer please"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def save_latency() -> None:
    """Time ``turn_writes.save_partial`` for three answer sizes."""
    with tempfile.TemporaryDirectory() as data:
        url = f"sqlite:///{Path(data) / 'bench.db'}"
        upgrade_to_head(url)
        engine = make_engine(url)
        session_id = "00000000-0000-0000-0000-00000000be4c"
        chat_store.create_session(engine, session_id, "bench", "t", "full")
        chat_store.start_run(engine, "run", session_id, "bench", "trace", "chat")
        print("save_partial latency (one UPDATE of execution_runs.partial):")
        for size in (1_000, 10_000, 100_000):
            timings = []
            for index in range(200):
                partial = {
                    "content": "x" * (size - 1) + str(index % 10),
                    "tool_calls": [],
                    "citations": [],
                    "usage": {},
                }
                started = time.perf_counter()
                turn_writes.save_partial(engine, "run", partial)
                timings.append((time.perf_counter() - started) * 1000)
            print(f"  {size:>7,} chars: p50 {_pct(timings, 0.5):5.2f} ms  p95 {_pct(timings, 0.95):5.2f} ms")
        engine.dispose()


async def _turns(base_url: str, interval: str, turns: int) -> tuple[list[float], list[int]]:
    with tempfile.TemporaryDirectory() as data:
        env = {**app_env(Path(data), base_url), "LOG_LEVEL": "WARNING", "ANSWER_SAVE_INTERVAL_S": interval}
        runtime = await AgentRuntime.open(load_settings(env))
        saves: list[int] = []
        original = turn_writes.save_partials

        def counting(engine, partials):  # type: ignore[no-untyped-def]
            saves[-1] += len(partials)
            return original(engine, partials)

        turn_writes.save_partials = counting  # type: ignore[assignment]
        cpu: list[float] = []
        try:
            for index in range(turns + 1):  # the first turn warms up (agent built)
                saves.append(0)
                started = time.process_time()
                run = await start_chat(runtime, ChatRequest(message=PROMPT, user_name=f"bench{index}"))
                async for _ in run.events():
                    pass
                cpu.append((time.process_time() - started) * 1000)
        finally:
            turn_writes.save_partials = original  # type: ignore[assignment]
            await runtime.close()
        return cpu[1:], saves[1:]


async def turn_costs(base_url: str, turns: int) -> None:
    """CPU per turn with partial saves off, every second and every 0.1 s."""
    print(f"per turn (200 tokens at 10 ms each, {turns} turns, in-process):")
    for interval in ("0", "1", "0.1"):
        cpu, saves = await _turns(base_url, interval, turns)
        print(
            f"  ANSWER_SAVE_INTERVAL_S={interval:<3s}: CPU p50 {statistics.median(cpu):6.1f} ms per turn, "
            f"{statistics.mean(saves):4.1f} partial saves per turn"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5, help="measured turns per setting (plus one warm-up)")
    args = parser.parse_args()
    save_latency()
    llm_port = free_port()
    llm = subprocess.Popen(
        [sys.executable, "-m", "tests.scripted_llm", "--port", str(llm_port), "--delay-ms", "10"],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.5)
        asyncio.run(turn_costs(f"http://127.0.0.1:{llm_port}/v1", max(1, min(args.turns, 50))))
    finally:
        llm.terminate()
        llm.wait(10)


if __name__ == "__main__":
    main()
