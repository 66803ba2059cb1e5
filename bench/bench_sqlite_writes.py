"""How long a turn's SQLite writes wait when many arrive at once: queued in the process or polling.

``--k`` turns' writes arrive at once, as ``--k`` admitted runs' do, through the real store
functions on a thread pool the size of ``asyncio.to_thread``'s: the admission transactions
(``turn_writes.open_turn``), then a partial save each, then the final saves
(``turn_writes.finalise_run``); each call is timed from its submission (pool wait included).
Rounds alternate between an engine whose writers wait in line for the write lock (the default, ``ventapp.db.sqlite_writes``)
and one left to SQLite's busy handler, which sleeps and polls (``queue_writes=False``), on the
same database, so both meet the same machine. Prints each write's latency p50/p99 and the
round's wall time per mode. Issue 18.

Run: ``.venv/bin/python -m bench.bench_sqlite_writes [--k 20] [--rounds 6]``.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy.engine import Engine

from ventapp.db import turn_writes
from ventapp.db.engine import make_engine, upgrade_to_head

ANSWER = {"content": "word " * 200, "tool_calls": [], "citations": [], "usage": {}, "status": "complete"}


def _phase(pool: ThreadPoolExecutor, calls: list[Callable[[], object]]) -> list[float]:
    """Submit ``calls`` at once; each one's ms from submission to its end (pool wait included)."""

    def timed(call: Callable[[], object], submitted: float) -> float:
        call()
        return (time.perf_counter() - submitted) * 1000

    futures = [pool.submit(timed, call, time.perf_counter()) for call in calls]
    return [future.result() for future in futures]


def _round(engine: Engine, pool: ThreadPoolExecutor, k: int) -> tuple[dict[str, list[float]], float]:
    runs = [(str(uuid.uuid4()), str(uuid.uuid4())) for _ in range(k)]
    began = time.perf_counter()
    waits = {
        "admission": _phase(
            pool,
            [
                functools.partial(
                    turn_writes.open_turn,
                    engine,
                    session_id=session_id,
                    run_id=run_id,
                    user_name=f"bench{user}",
                    trace_id="t",
                    kind="chat",
                    message="How much air does the heading need?",
                    new_session=("bench", "full", None),
                )
                for user, (session_id, run_id) in enumerate(runs)
            ],
        ),
        "partial save": _phase(
            pool,
            [functools.partial(turn_writes.save_partials, engine, {run_id: ANSWER}) for _, run_id in runs],
        ),
        "final save": _phase(
            pool,
            [
                functools.partial(
                    turn_writes.finalise_run,
                    engine,
                    run_id,
                    "success",
                    answer={**ANSWER, "session_id": session_id},
                )
                for session_id, run_id in runs
            ],
        ),
    }
    return waits, time.perf_counter() - began


def _pct(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main() -> None:
    """Alternate queued and polling rounds on one database and print what the writes waited."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--k", type=int, default=20, help="concurrent turns (threads) per round")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per mode, interleaved")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'app.db'}"
        upgrade_to_head(url)
        engines = {
            "queued": make_engine(url, busy_timeout_s=30),
            "polling": make_engine(url, busy_timeout_s=30, queue_writes=False),
        }
        results: dict[str, dict[str, list[float]]] = {mode: {} for mode in engines}
        walls: dict[str, list[float]] = {mode: [] for mode in engines}
        # As many workers as asyncio.to_thread's default executor has on this machine.
        pool = ThreadPoolExecutor(max_workers=min(32, (os.cpu_count() or 1) + 4))
        for engine in engines.values():  # warm-up: connections open, statements compiled
            _round(engine, pool, 2)
        for _ in range(args.rounds):
            for mode, engine in engines.items():
                waits, wall = _round(engine, pool, args.k)
                walls[mode].append(wall)
                for name, values in waits.items():
                    results[mode].setdefault(name, []).extend(values)
        pool.shutdown()
        for engine in engines.values():
            engine.dispose()
    print(f"{args.k} concurrent turns x {args.rounds} rounds per mode, alternating (ms per call)")
    for mode, by_step in results.items():
        steps = "; ".join(
            f"{name} p50 {_pct(values, 0.5):.1f} p99 {_pct(values, 0.99):.1f}"
            for name, values in by_step.items()
        )
        print(f"  {mode:8s} {steps}; round wall median {1000 * statistics.median(walls[mode]):.0f} ms")


if __name__ == "__main__":
    main()
