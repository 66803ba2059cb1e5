"""Profile the product's pipeline (or the bare-graph ceiling) streaming turns in-process.

Starts the scripted model (zero delay, "long answer": 200 tokens), then runs ``--rounds``
rounds of ``--k`` concurrent turns under pyinstrument, sampling the event loop's thread
(store calls in worker threads show up as the awaits that wait for them). Prints the
call tree, cut at ``--min-share`` of the time, and the CPU seconds per turn.

Run: ``.venv/bin/python -m bench.profile_turn [--k 20] [--rounds 3] [--target product|ceiling]
[--html out.html] [--no-profile]``; the targets between ``product`` and ``ceiling`` split
the difference one layer at a time (see ``TARGETS``). Needs pyinstrument (a pinned dev tool in requirements.txt).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from pyinstrument import Profiler

from bench import event_loop
from bench.bench_load import PROMPT, Result, _pct
from bench.ceiling import build_ceiling, ceiling_stream
from bench.scripted_model import scripted_model
from tests.support import app_env
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import load_settings


def _children_cpu_s() -> float:
    """CPU seconds used so far by this process's children (the scripted model server; Linux)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():  # fields[1] is the parent's pid
            total += int(fields[11]) + int(fields[12])  # utime, stime in clock ticks
    return total / os.sysconf("SC_CLK_TCK")


async def _product_turn(runtime: AgentRuntime, index: int, tails: list[float]) -> Result:
    """One in-process turn; appends to ``tails`` the ms from its last token to its closing frame.

    The closing frame follows the answer's save and the run's settlement, so the tail is what
    a turn waits for the database after the model is done.
    """
    started = time.perf_counter()
    first: float | None = None
    last = started
    parts: list[str] = []
    run = await start_chat(runtime, ChatRequest(message=PROMPT, user_name=f"bench{index}"))
    async for event in run.events():
        if event.type == "token":
            parts.append(event.content)
            last = time.perf_counter()
            if first is None:
                first = (last - started) * 1000
    tails.append((time.perf_counter() - last) * 1000)
    return 200, first, "".join(parts)


TARGETS = {
    "product": "product: the pipeline in-process (admission, kernel, metering, saves)",
    "graph": "graph: the product's compiled graph streamed bare (its middleware, checkpointer, modes)",
    "ceiling+modes": "ceiling+modes: bare graph + checkpointer, streamed with the product's modes",
    "ceiling+checkpointer": "ceiling+checkpointer: bare graph + the product's checkpointer",
    "ceiling": "ceiling: bare create_deep_agent graph, no checkpointer",
}
"""Targets from the product down to the bare graph, each adding one layer (issue 18)."""


async def _profile(
    base_url: str, k: int, rounds: int, target: str, html: Path | None, top: int, profile: bool = True
) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        limits = {"MAX_CONCURRENT_RUNS": "1000", "MAX_RUNS_PER_USER": "1000", "LOG_LEVEL": "WARNING"}
        settings = load_settings({**app_env(Path(data_dir), base_url), **limits})
        runtime = await AgentRuntime.open(settings)
        ceiling = build_ceiling(settings)
        ceiling_saved = build_ceiling(settings, runtime.checkpointer)
        graph = runtime.agents.get().graph
        counter = iter(range(10**9))
        tails: list[float] = []

        def thread() -> dict[str, Any]:
            return {"configurable": {"thread_id": f"bench-{next(counter)}", "user_name": "bench"}}

        async def turn(index: int) -> Result:
            if target == "ceiling":
                return await ceiling_stream(ceiling, PROMPT)
            if target == "ceiling+checkpointer":
                return await ceiling_stream(ceiling_saved, PROMPT, thread())
            if target == "ceiling+modes":
                return await ceiling_stream(ceiling_saved, PROMPT, thread(), product_modes=True)
            if target == "graph":
                return await ceiling_stream(graph, PROMPT, thread(), product_modes=True)
            return await _product_turn(runtime, index, tails if index >= 0 else [])

        try:
            await turn(-1)  # warm-up: imports, first connections
            await asyncio.sleep(1)  # let the prompt-size check finish outside the profile
            profiler = Profiler(interval=0.0005, async_mode="disabled")
            cpu_started, started = time.process_time(), time.perf_counter()
            loop_started, model_started = time.thread_time(), _children_cpu_s()
            if profile:
                profiler.start()
            results: list[Result] = []
            for _ in range(rounds):
                results += await asyncio.gather(*(turn(i) for i in range(k)))
            if profile:
                profiler.stop()
            cpu, wall = time.process_time() - cpu_started, time.perf_counter() - started
            loop_cpu, model_cpu = time.thread_time() - loop_started, _children_cpu_s() - model_started
        finally:
            await runtime.close()
    turns = k * rounds
    firsts = [first for _status, first, _text in results if first is not None]
    summary = (
        f"{target}: {turns} turns, wall {wall:.2f} s, process CPU {cpu:.2f} s = {1000 * cpu / turns:.1f} ms "
        f"per turn (event loop's thread {1000 * loop_cpu / turns:.1f} ms; the model server's process "
        f"{1000 * model_cpu / turns:.1f} ms); first token p50 "
        f"{_pct(firsts, 0.5):.0f} ms, p99 {_pct(firsts, 0.99):.0f} ms"
        + (
            f"; last token to closing frame p50 {_pct(tails, 0.5):.0f} ms, p99 {_pct(tails, 0.99):.0f} ms"
            if tails
            else ""
        )
    )
    if not profile:
        print(summary)
        return
    print(profiler.output_text(unicode=True, color=False, time="percent_of_total"))
    for flat_time in ("total", "self"):
        print(f"-- functions by {flat_time} time (top {top})")
        text = profiler.output_text(time="percent_of_total", flat=True, flat_time=flat_time)
        print("\n".join([line for line in text.splitlines() if "%" in line][:top]))
    print(summary)
    if html is not None:
        html.write_text(profiler.output_html())  # noqa: ASYNC240  (after the measurement)
        print(f"HTML profile written to {html}")


def main() -> None:
    """Parse flags, start the scripted model in its own process and profile."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20, help="concurrent turns per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--target", choices=TARGETS, default="product", help="; ".join(TARGETS.values()))
    parser.add_argument("--no-profile", action="store_true", help="CPU per turn only, no sampling overhead")
    parser.add_argument("--html", type=Path, default=None, help="also write pyinstrument's HTML view here")
    parser.add_argument("--top", type=int, default=60, help="functions listed in the flat views")
    args = parser.parse_args()
    print(f"event loop: {event_loop.loop_name()}")
    with scripted_model() as base_url:
        event_loop.run(
            _profile(base_url, args.k, args.rounds, args.target, args.html, args.top, not args.no_profile)
        )


if __name__ == "__main__":
    main()
