"""Metering benchmark: N chat turns in-process through the real pipeline, then the ledger.

Each turn goes through ``start_chat`` → ``ChatRun.events()`` against the scripted
OpenAI-compatible server (real HTTP, real streamed ``usage``), alternating a tool-call
turn (two model calls) and a plain answer (one). The benchmark then prints:

* ledger rows and booked tokens, checked against the sum of the runs' ``done.usage``
  (a mismatch is printed as such — that is a billing bug);
* the time settlement adds per run (ms, p50/p95/max), measured around
  ``asyncio.to_thread(settle, ...)`` — the same call the pipeline's finalisation makes;
* the time a repeated (no-op) settlement of the same run takes.

If the pipeline already settles on its own, its calls are timed through a wrapper;
otherwise the benchmark settles each run itself from ``run.kernel.transcript.meter.calls``.

Run: ``.venv/bin/python -m bench.bench_metering [--turns 20]``. Loopback only; a temporary
data folder; nothing is left behind.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env
from ventapp.agent import chat_run, pipeline
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.billing import reports, settlement
from ventapp.config import load_settings

PROMPTS = ("please calculate (12+8)*3", "hello, what can you do?")
USER = "bench-metering"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def _timed_settle(original: Callable[..., Any], timings: list[float]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            timings.append((time.perf_counter() - started) * 1000)

    return wrapper


async def _turn(runtime: AgentRuntime, prompt: str) -> tuple[str, dict[str, Any], float, list[Any]]:
    started = time.perf_counter()
    run = await start_chat(runtime, ChatRequest(message=prompt, user_name=USER))
    done: dict[str, Any] = {}
    async for event in run.events():
        if event.type == "done":
            done = event.usage.model_dump()
        elif event.type == "error":
            raise RuntimeError(f"run failed: {event.message} ({event.code})")
    run_ms = (time.perf_counter() - started) * 1000
    return run.run_id, done, run_ms, list(run.kernel.transcript.meter.calls)


async def main(turns: int) -> None:
    real_settle = settlement.settle
    pipeline_timings: list[float] = []
    patched = [
        module
        for module in (settlement, chat_run, pipeline)
        if getattr(module, "settle", None) is real_settle
    ]
    for module in patched:
        module.settle = _timed_settle(real_settle, pipeline_timings)  # type: ignore[attr-defined]  # bench-only timing hook
    with ScriptedServer() as llm, tempfile.TemporaryDirectory() as data_dir:
        env = {**app_env(Path(data_dir), llm.base_url), "MAX_RUNS_PER_USER": "4", "LOG_LEVEL": "WARNING"}
        runtime = await AgentRuntime.open(load_settings(env))
        try:
            await _turn(runtime, PROMPTS[1])  # warm-up: agent built, connections open (not counted)
            pipeline_timings.clear()
            booked: list[dict[str, Any]] = []
            settle_ms: list[float] = []
            noop_ms: list[float] = []
            run_ms: list[float] = []
            usage_in = usage_out = model_calls = 0
            mode = "pipeline"
            for index in range(turns):
                run_id, done, elapsed, calls = await _turn(runtime, PROMPTS[index % 2])
                run_ms.append(elapsed)
                usage_in += done.get("input_tokens", 0)
                usage_out += done.get("output_tokens", 0)
                model_calls += done.get("model_calls", 0)
                owner, _ = await asyncio.to_thread(reports.run_usage, runtime.engine, run_id)
                kwargs = {
                    "run_id": run_id,
                    "session_id": "",
                    "user_name": USER,
                    "model": runtime.settings.model_name,
                    "calls": calls,
                }
                if owner is None:  # the pipeline does not settle (yet): do what its finalisation would
                    mode = "bench-side"
                    started = time.perf_counter()
                    await asyncio.to_thread(real_settle, runtime.engine, **kwargs)
                    settle_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                await asyncio.to_thread(real_settle, runtime.engine, **kwargs)
                noop_ms.append((time.perf_counter() - started) * 1000)
                booked += (await asyncio.to_thread(reports.run_usage, runtime.engine, run_id))[1]
            if mode == "pipeline":
                settle_ms = pipeline_timings[: len(run_ms)]

            today = await asyncio.to_thread(reports.today_usage, runtime.engine, runtime.settings, USER)
            rows = len(booked)
            booked_in = sum(item["input_tokens"] for item in booked)
            booked_out = sum(item["output_tokens"] for item in booked)
        finally:
            await runtime.close()
            for module in patched:
                module.settle = real_settle  # type: ignore[attr-defined]  # undo the timing hook

    print(f"metering benchmark: {turns} turns, model {runtime.settings.model_name}, settlement by {mode}")
    print(f"  model calls (done.usage)   {model_calls}")
    print(f"  ledger rows written        {rows}")
    print(f"  tokens in done.usage       in={usage_in} out={usage_out} total={usage_in + usage_out}")
    print(f"  tokens booked in ledger    in={booked_in} out={booked_out} total={booked_in + booked_out}")
    print(
        f"  today's total (incl. warm) {today.total_tokens} tokens, cost {[c.public()['display'] for c in today.costs]}"
    )
    match = rows == model_calls and (booked_in, booked_out) == (usage_in, usage_out)
    print(f"  ledger == done.usage       {'yes' if match else 'MISMATCH'}")
    print(
        f"  settle per run (ms)        p50={_pct(settle_ms, 0.5):.2f} p95={_pct(settle_ms, 0.95):.2f} "
        f"max={max(settle_ms, default=float('nan')):.2f}"
    )
    print(f"  repeated settle, no-op (ms) p50={_pct(noop_ms, 0.5):.2f}")
    p50_run = statistics.median(run_ms)
    print(
        f"  run duration p50 (ms)      {p50_run:.1f}  -> settlement adds {100 * _pct(settle_ms, 0.5) / p50_run:.1f}%"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20, help="chat turns to run (1–500)")
    args = parser.parse_args()
    asyncio.run(main(max(1, min(args.turns, 500))))
