"""Profile the product's pipeline (or the bare-graph ceiling) streaming turns in-process.

Starts the scripted model (zero delay, "long answer": 200 tokens), then runs ``--rounds``
rounds of ``--k`` concurrent turns under pyinstrument, sampling the event loop's thread
(store calls in worker threads show up as the awaits that wait for them). Prints the
call tree, cut at ``--min-share`` of the time, and the CPU seconds per turn.

Run: ``.venv/bin/python -m bench.profile_turn [--k 20] [--rounds 3] [--target product|ceiling]
[--html out.html]``. Needs pyinstrument (a pinned dev tool in requirements.txt).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from pyinstrument import Profiler

from bench.bench_load import PROMPT, _inproc_stream
from bench.ceiling import build_ceiling, ceiling_stream
from bench.scripted_model import scripted_model
from tests.support import app_env
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import load_settings


async def _profile(base_url: str, k: int, rounds: int, target: str, html: Path | None, top: int) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        limits = {"MAX_CONCURRENT_RUNS": "1000", "MAX_RUNS_PER_USER": "1000", "LOG_LEVEL": "WARNING"}
        settings = load_settings({**app_env(Path(data_dir), base_url), **limits})
        runtime = await AgentRuntime.open(settings)
        ceiling = build_ceiling(settings)

        async def turn(index: int) -> object:
            if target == "ceiling":
                return await ceiling_stream(ceiling, PROMPT)
            return await _inproc_stream(runtime, index)

        try:
            await turn(-1)  # warm-up: imports, first connections
            await asyncio.sleep(1)  # let the prompt-size check finish outside the profile
            profiler = Profiler(interval=0.0005, async_mode="disabled")
            cpu_started, started = time.process_time(), time.perf_counter()
            profiler.start()
            for _ in range(rounds):
                await asyncio.gather(*(turn(i) for i in range(k)))
            profiler.stop()
            cpu, wall = time.process_time() - cpu_started, time.perf_counter() - started
        finally:
            await runtime.close()
    turns = k * rounds
    print(profiler.output_text(unicode=True, color=False, time="percent_of_total"))
    for flat_time in ("total", "self"):
        print(f"-- functions by {flat_time} time (top {top})")
        text = profiler.output_text(time="percent_of_total", flat=True, flat_time=flat_time)
        print("\n".join([line for line in text.splitlines() if "%" in line][:top]))
    print(
        f"{target}: {turns} turns, wall {wall:.2f} s, process CPU {cpu:.2f} s = {1000 * cpu / turns:.1f} ms per turn"
    )
    if html is not None:
        html.write_text(profiler.output_html())  # noqa: ASYNC240  (after the measurement)
        print(f"HTML profile written to {html}")


def main() -> None:
    """Parse flags, start the scripted model in its own process and profile."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20, help="concurrent turns per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--target", choices=("product", "ceiling"), default="product")
    parser.add_argument("--html", type=Path, default=None, help="also write pyinstrument's HTML view here")
    parser.add_argument("--top", type=int, default=60, help="functions listed in the flat views")
    args = parser.parse_args()
    with scripted_model() as base_url:
        asyncio.run(_profile(base_url, args.k, args.rounds, args.target, args.html, args.top))


if __name__ == "__main__":
    main()
