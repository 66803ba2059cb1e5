"""Scale-out benchmark: runs per second on 1 SQLite process vs 1 and 2 processes on PostgreSQL + Redis.

Each configuration gets the same closed loop: C clients, each sending ``POST /api/chat``
("long answer please", 200 tokens from the scripted model with zero delay) one after another
for D seconds, spread round-robin over the processes. Prints completed runs/s per
configuration and the ratios the issue asks for: PostgreSQL + Redis (1 process) against the
SQLite process, and 2 processes against 1. Servers are throwaway (tests/servers.py), processes
are ``tests.scale.api_process`` (uvicorn, one worker each); everything on 127.0.0.1.

Run: ``.venv/bin/python -m bench.bench_scale [--clients 8] [--seconds 20] [--baseline DIR]``.
``--baseline`` measures PostgreSQL + Redis (1 process) a second time with the code of another
checkout (e.g. ``git archive <commit> | tar -x -C DIR``), in the same run, for a before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx

from tests.scale.processes import AppProcess, scale_env
from tests.scripted_llm.server import ScriptedServer
from tests.servers import PostgresServer, RedisServer
from tests.support import app_env

PROMPT = "long answer please"
LIMITS = {"MAX_CONCURRENT_RUNS": "200", "MAX_RUNS_PER_USER": "200"}


async def _client(url: str, user: str, until: float, done: list[int]) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        while time.monotonic() < until:
            files = {"message": (None, PROMPT), "user_name": (None, user)}
            async with http.stream("POST", "/api/chat", files=files) as response:
                async for _ in response.aiter_bytes():
                    pass
                if response.status_code == 200:
                    done.append(1)


async def _load(urls: list[str], clients: int, seconds: float) -> float:
    done: list[int] = []
    until = time.monotonic() + seconds
    started = time.monotonic()
    await asyncio.gather(*(_client(urls[i % len(urls)], f"bench-{i}", until, done) for i in range(clients)))
    return len(done) / (time.monotonic() - started)


def _measure(
    envs: list[dict[str, str]], folder: Path, clients: int, seconds: float, root: Path | None = None
) -> float:
    apps = [AppProcess(env, folder / f"app-{i}.log", *([root] if root else [])) for i, env in enumerate(envs)]
    try:
        for app in apps:
            app.spawn()
        for app in apps:
            app.wait()
        asyncio.run(_load([a.url for a in apps], clients, 2))  # warm-up: imports, first agent build
        return asyncio.run(_load([a.url for a in apps], clients, seconds))
    finally:
        for app in apps:
            app.stop()


def main() -> None:
    """Print runs/s per configuration and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to measure as 'before'")
    args = parser.parse_args()
    before = None
    pg, redis = PostgresServer().start(), RedisServer().start()
    try:
        with ScriptedServer(delay_ms=0) as llm, tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            sqlite = _measure(
                [{**app_env(root / "s", llm.base_url), **LIMITS}], root, args.clients, args.seconds
            )
            if args.baseline is not None:
                url = pg.create_database()
                before = _measure(
                    [{**scale_env(root / "p0", llm.base_url, url, redis.url), **LIMITS}],
                    root, args.clients, args.seconds, args.baseline,
                )  # fmt: skip
            url = pg.create_database()
            one = _measure(
                [{**scale_env(root / "p1", llm.base_url, url, redis.url), **LIMITS}],
                root,
                args.clients,
                args.seconds,
            )
            url = pg.create_database()
            two = _measure(
                [{**scale_env(root / f"p2{i}", llm.base_url, url, redis.url), **LIMITS} for i in range(2)],
                root, args.clients, args.seconds,
            )  # fmt: skip
    finally:
        pg.stop()
        redis.stop()
    print(f"clients={args.clients} seconds={args.seconds}")
    print(f"sqlite, 1 process:          {sqlite:7.1f} runs/s")
    if before is not None:
        print(f"  baseline {args.baseline}:  {before:7.1f} runs/s  ({before / sqlite:.0%} of sqlite)")
    print(f"postgres+redis, 1 process:  {one:7.1f} runs/s  ({one / sqlite:.0%} of sqlite)")
    print(f"postgres+redis, 2 processes:{two:7.1f} runs/s  ({two / one:.2f}x of 1 process)")


if __name__ == "__main__":
    main()
