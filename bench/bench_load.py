"""Load benchmark: K concurrent SSE chats on loopback vs. the same agent consumed in-process.

Prints, for each K: completed streams, 429s, time to first token p50/p99 (ms) and the
token rate (tokens/s) over HTTP (``POST /api/chat`` on the real backend,
``reflex run --env prod --backend-only``) and in-process (the pipeline's events with no
HTTP), and their ratio — the figure that survives a noisy machine. The model is the
scripted server with zero delay answering "long answer" with 200 tokens.

Then (issue 11) 20 concurrent runs, each joined from its first frame by F followers
(``GET /api/chat/stream``, F = 1 and 10): each follower's token rate against its run's
originating client and the in-process ceiling, the time to a join's first frame, and how
long after the originator a follower gets ``done``.

Run: ``.venv/bin/python -m bench.bench_load [--k 1,20,50] [--followers 1,10]``. Bounded: at
most 200 concurrent streams, each with a 120 s timeout; everything targets 127.0.0.1.
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

import httpx

from tests.e2e.reflex_app import ReflexApp, free_port
from tests.support import app_env
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import PROJECT_ROOT, load_settings

MAX_K = 200
PROMPT = "long answer please"
FOLLOWER_RUNS = 20


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _http_stream(client: httpx.AsyncClient, index: int) -> tuple[int, float | None, int]:
    started = time.perf_counter()
    first: float | None = None
    tokens = 0
    files = {"message": (None, PROMPT), "user_name": (None, f"bench{index}")}
    async with client.stream("POST", "/api/chat", files=files) as response:
        if response.status_code != 200:
            await response.aread()
            return response.status_code, None, 0
        async for line in response.aiter_lines():
            if '"type":"token"' in line:
                tokens += 1
                if first is None:
                    first = (time.perf_counter() - started) * 1000
    return 200, first, tokens


async def _inproc_stream(runtime: AgentRuntime, index: int) -> tuple[int, float | None, int]:
    started = time.perf_counter()
    first: float | None = None
    tokens = 0
    run = await start_chat(runtime, ChatRequest(message=PROMPT, user_name=f"bench{index}"))
    async for event in run.events():
        if event.type == "token":
            tokens += 1
            if first is None:
                first = (time.perf_counter() - started) * 1000
    return 200, first, tokens


def _summary(label: str, results: list[tuple[int, float | None, int]], wall_s: float) -> float:
    ok = [r for r in results if r[0] == 200]
    ttft = [r[1] for r in ok if r[1] is not None]
    tokens = sum(r[2] for r in ok)
    rate = tokens / wall_s if wall_s else 0.0
    print(
        f"  {label:10s} completed={len(ok):3d} 429s={sum(r[0] == 429 for r in results):3d} "
        f"ttft_p50={_pct(ttft, 0.5):7.1f}ms ttft_p99={_pct(ttft, 0.99):7.1f}ms "
        f"tokens={tokens:6d} rate={rate:8.0f} tok/s wall={wall_s:5.2f}s"
    )
    return rate


async def _measure(k: int, url: str, runtime: AgentRuntime) -> None:
    limits = httpx.Limits(max_connections=k + 5, max_keepalive_connections=k + 5)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        await _http_stream(client, -1)  # warm-up: agent built, connections open
        started = time.perf_counter()
        http_results = await asyncio.gather(*(_http_stream(client, i) for i in range(k)))
        http_wall = time.perf_counter() - started
    await _inproc_stream(runtime, -1)
    started = time.perf_counter()
    inproc_results = await asyncio.gather(*(_inproc_stream(runtime, i) for i in range(k)))
    inproc_wall = time.perf_counter() - started
    print(f"K={k}")
    http_rate = _summary("http", http_results, http_wall)
    inproc_rate = _summary("in-process", inproc_results, inproc_wall)
    http_ttft = statistics.median([r[1] for r in http_results if r[1] is not None] or [float("nan")])
    in_ttft = statistics.median([r[1] for r in inproc_results if r[1] is not None] or [float("nan")])
    print(
        f"  ratio http/in-process token rate = {http_rate / inproc_rate:.2f}; ttft p50 gap = {http_ttft - in_ttft:+.1f} ms"
    )


# --- followers (issue 11): K clients joining each run through GET /api/chat/stream ----------


async def _follow(
    client: httpx.AsyncClient, session_id: str, user: str, t0: float
) -> tuple[int, float, float]:
    """Join a run from its first frame: (tokens, ms to the first frame, s from the run's start to done)."""
    asked = time.perf_counter()
    first_ms = float("nan")
    tokens = 0
    params = {"session_id": session_id, "user_name": user}
    async with client.stream("GET", "/api/chat/stream", params=params) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            if first_ms != first_ms:
                first_ms = (time.perf_counter() - asked) * 1000
            tokens += '"type":"token"' in line
    return tokens, first_ms, time.perf_counter() - t0


async def _run_with_followers(
    client: httpx.AsyncClient, index: int, followers: int
) -> tuple[tuple[int, float], list[tuple[int, float, float]]]:
    t0 = time.perf_counter()
    user = f"follow{index}"
    tokens = 0
    joins: list[asyncio.Task[tuple[int, float, float]]] = []
    files = {"message": (None, PROMPT), "user_name": (None, user)}
    async with client.stream("POST", "/api/chat", files=files) as response:
        session_id = response.headers["x-session-id"]
        joins = [asyncio.create_task(_follow(client, session_id, user, t0)) for _ in range(followers)]
        async for line in response.aiter_lines():
            tokens += '"type":"token"' in line
    origin = (tokens, time.perf_counter() - t0)
    return origin, list(await asyncio.gather(*joins))


async def _measure_followers(url: str, runtime: AgentRuntime, runs: int, followers: list[int]) -> None:
    """``runs`` concurrent chats, each joined by F followers: their token rate against the originator's.

    First, single runs one at a time with one follower: the time to a join's first frame
    on an idle server (the log's own cost, without the queueing of a loaded machine).
    """
    limits = httpx.Limits(max_connections=10, max_keepalive_connections=10)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        idle = [(await _run_with_followers(client, 1000 + i, 1))[1][0][1] for i in range(10)]
    print(f"join first frame, one run at a time: p50 {_pct(idle, 0.5):.1f} ms, max {max(idle):.1f} ms")
    await _inproc_stream(runtime, -1)
    started = time.perf_counter()
    ceiling = await asyncio.gather(*(_inproc_stream(runtime, i) for i in range(runs)))
    ceiling_rate = sum(r[2] for r in ceiling) / (time.perf_counter() - started) / runs
    for count in followers:
        limits = httpx.Limits(max_connections=runs * (count + 1) + 5, max_keepalive_connections=runs + 5)
        async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
            await _run_with_followers(client, -1, 1)  # warm-up
            results = await asyncio.gather(*(_run_with_followers(client, i, count) for i in range(runs)))
        origin_rates = [tokens / seconds for (tokens, seconds), _ in results]
        follower_rates = [tokens / seconds for _, joins in results for tokens, _, seconds in joins]
        first_ms = [first for _, joins in results for _, first, _ in joins]
        lag_ms = [(seconds - origin_s) * 1000 for (_, origin_s), joins in results for _, _, seconds in joins]
        complete = sum(tokens == results[0][0][0] for _, joins in results for tokens, _, _ in joins)
        origin_p50, follower_p50 = statistics.median(origin_rates), statistics.median(follower_rates)
        print(
            f"followers={count:2d} x {runs} runs: complete {complete}/{runs * count}; per stream tok/s p50: "
            f"originator {origin_p50:.0f}, follower {follower_p50:.0f} ({follower_p50 / origin_p50:.2f}x), "
            f"in-process ceiling {ceiling_rate:.0f}; join first frame p50 {_pct(first_ms, 0.5):.1f} ms "
            f"p99 {_pct(first_ms, 0.99):.1f} ms; follower done after originator p50 {_pct(lag_ms, 0.5):+.1f} ms"
        )


async def _measure_all(ks: list[int], base_url: str, followers: list[int] | None = None) -> None:
    with tempfile.TemporaryDirectory() as http_dir, tempfile.TemporaryDirectory() as local_dir:
        limits = {
            "MAX_CONCURRENT_RUNS": "1000",
            "MAX_RUNS_PER_USER": "1000",
            "LOG_LEVEL": "WARNING",
            "MODEL_TIMEOUT_S": "300",  # a loaded machine queues requests at the model for long
        }
        env = {**app_env(Path(http_dir), base_url), **limits}
        with ReflexApp(env, Path(http_dir) / "app.log", backend_only=True) as app:
            runtime = await AgentRuntime.open(load_settings({**app_env(Path(local_dir), base_url), **limits}))
            try:
                for k in ks:
                    await _measure(min(k, MAX_K), app.url, runtime)
                if followers:
                    await _measure_followers(app.url, runtime, FOLLOWER_RUNS, followers)
            finally:
                await runtime.close()


def main(ks: list[int], followers: list[int] | None = None) -> None:
    """Start the scripted model in its own process, then measure each K."""
    llm_port = free_port()
    llm = subprocess.Popen(
        [sys.executable, "-m", "tests.scripted_llm", "--port", str(llm_port)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.5)
        asyncio.run(_measure_all(ks, f"http://127.0.0.1:{llm_port}/v1", followers))
    finally:
        llm.terminate()
        llm.wait(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", default="1,20,50", help="comma-separated concurrency levels (max 200)")
    parser.add_argument(
        "--followers",
        default="1,10",
        help="followers per run at 20 concurrent runs (GET /api/chat/stream); '' = none",
    )
    args = parser.parse_args()
    main(
        [int(part) for part in args.k.split(",") if part],
        [int(part) for part in args.followers.split(",") if part],
    )
