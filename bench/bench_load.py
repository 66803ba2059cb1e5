"""Load benchmark: K concurrent SSE chats on loopback vs. the same agent consumed in-process.

Prints, for each K: completed streams, 429s, time to first token p50/p99 (ms) and the
token rate (tokens/s) of three consumers of the same scripted model, one after the other:

* ``ceiling`` — a bare ``create_deep_agent`` graph with the same model and tools, streamed
  in-process (:mod:`bench.ceiling`): what the agent itself can do here;
* ``in-process`` — the product's pipeline (admission, kernel, metering, settlement, saves)
  consumed in-process, no HTTP;
* ``http`` — ``POST /api/chat`` on the real backend (``reflex run --env prod --backend-only``);

and the ratios between them — the figures that survive a noisy machine. Tokens are counted
from the text received (the scripted model streams one word per chunk), so token frames
that carry several chunks count as what they carry. The model is the scripted server with
zero delay answering "long answer" with 200 tokens. Everything runs on the server's event
loop kind (uvloop when installed, :mod:`bench.event_loop`).

First, ``--single`` turns of each consumer one at a time, interleaved, for the first-token
gap to the ceiling (median); then each K.

Then (issue 11) 20 concurrent runs, each joined from its first frame by F followers
(``GET /api/chat/stream``, F = 1 and 10): each follower's token rate against its run's
originating client and the in-process ceiling, the time to a join's first frame, and how
long after the originator a follower gets ``done``.

Run: ``.venv/bin/python -m bench.bench_load [--k 20,100,200] [--rounds 3] [--single 15]
[--followers 1,10] [--turns 1]``; ``--turns N``: each of the K clients streams N answers back to
back per round (K streams open all along, a phase N answers long: steadier ratios). Bounded: at
most 200 concurrent streams, each with a 120 s timeout; everything targets 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from bench import event_loop
from bench.ceiling import build_ceiling, ceiling_stream
from bench.scripted_model import scripted_model
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.tokens import split_words
from tests.support import app_env
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import load_settings
from ventapp.obs.heap import freeze_start_up_heap

MAX_K = 200
PROMPT = "long answer please"
FOLLOWER_RUNS = 20

Result = tuple[int, float | None, str]
"""``(HTTP status, first token ms or None, answer text received)`` of one stream."""


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _tokens_in(line: str) -> int:
    """Tokens (the scripted model's words) a ``data:`` line carries; 0 for other frames."""
    if '"type":"token"' not in line:
        return 0
    return len(split_words(json.loads(line.removeprefix("data: "))["content"]))


async def _http_stream(client: httpx.AsyncClient, index: int) -> Result:
    started = time.perf_counter()
    first: float | None = None
    parts: list[str] = []
    files = {"message": (None, PROMPT), "user_name": (None, f"bench{index}")}
    async with client.stream("POST", "/api/chat", files=files) as response:
        if response.status_code != 200:
            await response.aread()
            return response.status_code, None, ""
        async for line in response.aiter_lines():
            if '"type":"token"' in line:
                parts.append(json.loads(line.removeprefix("data: "))["content"])
                if first is None:
                    first = (time.perf_counter() - started) * 1000
    return 200, first, "".join(parts)


async def _inproc_stream(runtime: AgentRuntime, index: int) -> Result:
    started = time.perf_counter()
    first: float | None = None
    parts: list[str] = []
    run = await start_chat(runtime, ChatRequest(message=PROMPT, user_name=f"bench{index}"))
    async for event in run.events():
        if event.type == "token":
            parts.append(event.content)
            if first is None:
                first = (time.perf_counter() - started) * 1000
    return 200, first, "".join(parts)


def _summary(label: str, results: list[Result], wall_s: float) -> tuple[float, float]:
    """Print one consumer's line; return its token rate (tokens/s) and first-token p50 (ms)."""
    ok = [r for r in results if r[0] == 200]
    ttft = [r[1] for r in ok if r[1] is not None]
    tokens = sum(len(split_words(r[2])) for r in ok if r[2])
    rate = tokens / wall_s if wall_s else 0.0
    print(
        f"  {label:10s} completed={len(ok):3d} 429s={sum(r[0] == 429 for r in results):3d} "
        f"ttft_p50={_pct(ttft, 0.5):7.1f}ms ttft_p99={_pct(ttft, 0.99):7.1f}ms "
        f"tokens={tokens:6d} rate={rate:8.0f} tok/s wall={wall_s:5.2f}s"
    )
    return rate, _pct(ttft, 0.5)


async def _timed(
    k: int, turns: int, stream: Callable[[int], Awaitable[Result]]
) -> tuple[list[Result], float]:
    """``k`` concurrent clients, each streaming ``turns`` turns one after another: results, wall s."""

    async def client(index: int) -> list[Result]:
        return [await stream(index) for _ in range(turns)]

    started = time.perf_counter()
    per_client = await asyncio.gather(*(client(i) for i in range(k)))
    return [result for results in per_client for result in results], time.perf_counter() - started


async def _measure(k: int, url: str, runtime: AgentRuntime, ceiling: Any, turns: int = 1) -> dict[str, float]:
    """One round at concurrency ``k``: ceiling, product in-process, then HTTP; their ratios.

    Each of the ``k`` clients streams ``turns`` turns back to back, so ``k`` streams are open
    all along and a phase lasts ``turns`` answers (a K=20 phase of one turn lasts ~1 s here, and
    its ratio swung 0.5–1.5 from round to round).
    """
    await ceiling_stream(ceiling, PROMPT)  # warm-up each consumer once
    ceiling_results, ceiling_wall = await _timed(k, turns, lambda _: ceiling_stream(ceiling, PROMPT))
    await _inproc_stream(runtime, -1)
    inproc_results, inproc_wall = await _timed(k, turns, lambda i: _inproc_stream(runtime, i))
    limits = httpx.Limits(max_connections=k + 5, max_keepalive_connections=k + 5)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        await _http_stream(client, -1)  # warm-up: agent built, connections open
        http_results, http_wall = await _timed(k, turns, lambda i: _http_stream(client, i))
    print(f"K={k}")
    ceiling_rate, ceiling_ttft = _summary("ceiling", ceiling_results, ceiling_wall)
    inproc_rate, inproc_ttft = _summary("in-process", inproc_results, inproc_wall)
    http_rate, http_ttft = _summary("http", http_results, http_wall)
    figures = {
        "inproc/ceiling": inproc_rate / ceiling_rate,
        "http/inproc": http_rate / inproc_rate,
        "ttft gap in-process": inproc_ttft - ceiling_ttft,
        "ttft gap http": http_ttft - ceiling_ttft,
    }
    print(
        f"  ratios: in-process/ceiling = {figures['inproc/ceiling']:.2f}; "
        f"http/in-process = {figures['http/inproc']:.2f}; "
        f"ttft p50 gap to ceiling: in-process {figures['ttft gap in-process']:+.1f} ms, "
        f"http {figures['ttft gap http']:+.1f} ms"
    )
    return figures


SETTLE_S = 0.1
"""Pause before each single stream: what the turn before left running (in this process, the
HTTP client's own, or in the server) ends first, as it does between a user's messages."""


async def _single(turns: int, url: str, runtime: AgentRuntime, ceiling: Any) -> None:
    """``turns`` single streams of each consumer, one at a time and interleaved; median first token.

    The order turns round each time, so no consumer always follows the same one (the HTTP
    stream always came right after an in-process turn, in the same process as its client).
    """
    firsts: dict[str, list[float]] = {"ceiling": [], "in-process": [], "http": []}
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        streams = {
            "ceiling": lambda: ceiling_stream(ceiling, PROMPT),
            "in-process": lambda: _inproc_stream(runtime, -1),
            "http": lambda: _http_stream(client, -1),
        }
        labels = list(streams)
        for turn in range(turns + 1):  # the first turn of each warms up and is not counted
            for label in labels[turn % 3 :] + labels[: turn % 3]:
                await asyncio.sleep(SETTLE_S)
                _status, first, _text = await streams[label]()
                if turn and first is not None:
                    firsts[label].append(first)
    medians = {label: statistics.median(values) for label, values in firsts.items()}
    print(
        f"single stream, {turns} turns each, interleaved: first token p50 "
        + ", ".join(f"{label} {value:.1f} ms" for label, value in medians.items())
    )
    print(
        f"  gap to ceiling: in-process {medians['in-process'] - medians['ceiling']:+.1f} ms, "
        f"http {medians['http'] - medians['ceiling']:+.1f} ms"
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
            tokens += _tokens_in(line)
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
            tokens += _tokens_in(line)
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
    ceiling_rate = sum(len(split_words(r[2])) for r in ceiling) / (time.perf_counter() - started) / runs
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


async def _measure_all(
    ks: list[int],
    base_url: str,
    rounds: int,
    single: int,
    followers: list[int] | None = None,
    turns: int = 1,
) -> None:
    with tempfile.TemporaryDirectory() as http_dir, tempfile.TemporaryDirectory() as local_dir:
        limits = {
            "MAX_CONCURRENT_RUNS": "1000",
            "MAX_RUNS_PER_USER": "1000",
            "LOG_LEVEL": "WARNING",
            "MODEL_TIMEOUT_S": "300",  # a loaded machine queues requests at the model for long
            # The product's default (the tests' set-up says 0): a pooled connection the model
            # server closed as it was being reused is asked again once, as in production.
            "MODEL_MAX_RETRIES": "1",
        }
        env = {**app_env(Path(http_dir), base_url), **limits}
        with ReflexApp(env, Path(http_dir) / "app.log", backend_only=True) as app:
            settings = load_settings({**app_env(Path(local_dir), base_url), **limits})
            runtime = await AgentRuntime.open(settings)
            ceiling = build_ceiling(settings)
            try:
                # What lives as long as this process leaves the collector's full passes, as the
                # server's start-up heap does (ventapp.obs.heap): the three consumers then run
                # under the same collector, and no ~170 ms full pass lands in one phase by chance.
                await ceiling_stream(ceiling, PROMPT)
                await _inproc_stream(runtime, -1)
                print(f"start-up heap frozen here too: {freeze_start_up_heap()} objects")
                if single:
                    await _single(single, app.url, runtime, ceiling)
                by_k: dict[int, list[dict[str, float]]] = {}
                for round_no in range(rounds):
                    if rounds > 1:
                        print(f"-- round {round_no + 1} of {rounds}")
                    for k in ks:
                        by_k.setdefault(k, []).append(
                            await _measure(min(k, MAX_K), app.url, runtime, ceiling, turns)
                        )
                if followers:
                    await _measure_followers(app.url, runtime, FOLLOWER_RUNS, followers)
            finally:
                await runtime.close()
        if rounds > 1:
            print("-- medians over rounds")
            for k, rows in by_k.items():
                medians = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
                print(f"K={k} " + "; ".join(f"{key} = {value:.2f}" for key, value in medians.items()))


def main(
    ks: list[int], rounds: int = 1, single: int = 15, followers: list[int] | None = None, turns: int = 1
) -> None:
    """Start the scripted model in its own process; single streams, each K ``rounds`` times, followers.

    ``turns``: answers each of the K clients streams back to back in a round (see :func:`_measure`).
    """
    print(f"event loop: {event_loop.loop_name()} (the server's and this process's consumers')")
    with scripted_model() as base_url:
        event_loop.run(_measure_all(ks, base_url, rounds, single, followers, turns))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", default="20,100,200", help="comma-separated concurrency levels (max 200)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every K this many times")
    parser.add_argument("--single", type=int, default=15, help="single-stream turns per consumer (0: none)")
    parser.add_argument(
        "--turns", type=int, default=1, help="answers each of the K clients streams back to back per round"
    )
    parser.add_argument(
        "--followers",
        default="1,10",
        help="followers per run at 20 concurrent runs (GET /api/chat/stream); '' = none",
    )
    args = parser.parse_args()
    main(
        [int(part) for part in args.k.split(",") if part],
        args.rounds,
        args.single,
        [int(part) for part in args.followers.split(",") if part],
        args.turns,
    )
