"""CPU per call of a turn's database work, one thread, no contention (issue 18).

The store calls a chat turn makes in worker threads hold the GIL against the event loop that
streams tokens, so their CPU, not their wall time, is what they cost the other streams. This
makes ``--turns`` turns' calls one after the other on a fresh SQLite database (the product's
engine) and prints each call's CPU per call (``time.thread_time``), the median of ``--reps``
repetitions, so two checkouts compare on a busy machine.

Then it makes the same calls again in a worker thread while the main thread runs Python without
pause, as the event loop does under load, and prints that CPU beside the first: the price of
handing the GIL back and forth (the sqlite3 module releases it around every prepare, step and
commit, and each time the busy thread must be made to give it back; CPython's switch interval,
https://docs.python.org/3/library/sys.html#sys.setswitchinterval).

Run: ``.venv/bin/python -m bench.bench_store_cpu [--turns 200] [--reps 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from tests.support import app_env
from ventapp.agent.turn_context import load_turn_context
from ventapp.billing.guard import precheck
from ventapp.billing.pricing import seed_prices
from ventapp.billing.settlement import settle
from ventapp.billing.usage import CallUsage
from ventapp.config import load_settings
from ventapp.db import turn_writes
from ventapp.db.engine import make_engine, upgrade_to_head


def main() -> None:
    """Time each store call of ``--turns`` turns, ``--reps`` times; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'app.db'}"
        upgrade_to_head(url)
        engine = make_engine(url)
        seed_prices(engine)
        settings = load_settings(
            {**app_env(Path(folder), "http://127.0.0.1:9"), "TFAGENTS_DAILY_TOKEN_LIMIT": "10000000"}
        )
        model = settings.model_name
        cpu: dict[str, list[float]] = {}

        def timed(name: str, call: Callable[[], object]) -> None:
            began = time.thread_time()
            call()
            cpu.setdefault(name, []).append(time.thread_time() - began)

        def turn(user: str) -> None:
            session_id, run_id = str(uuid.uuid4()), str(uuid.uuid4())
            answer = {"session_id": session_id, "content": "word " * 200, "tool_calls": [], "citations": []}
            answer |= {"usage": {"input_tokens": 900, "output_tokens": 200}, "status": "complete"}
            timed("precheck", lambda: precheck(engine, settings, user, model))
            timed(
                "admission",
                lambda: turn_writes.open_turn(
                    engine,
                    session_id=session_id,
                    run_id=run_id,
                    user_name=user,
                    trace_id="t",
                    kind="chat",
                    message="How much air does the heading need?",
                    new_session=("bench", "full", None),
                ),
            )
            timed("user context", lambda: load_turn_context(engine, user, session_id))
            timed("partial save", lambda: turn_writes.save_partials(engine, {run_id: answer}))
            timed("final save", lambda: turn_writes.finalise_run(engine, run_id, "success", answer=answer))
            calls = [CallUsage(f"{run_id}:1", 900, 200, "provider")]
            timed(
                "settlement",
                lambda: settle(
                    engine, run_id=run_id, session_id=session_id, user_name=user, model=model, calls=calls
                ),
            )

        for index in range(20):  # warm-up: statements compiled, connections open
            turn(f"warm{index}")
        medians: dict[str, list[float]] = {}

        def measure() -> None:
            for _ in range(args.reps):
                cpu.clear()
                for index in range(args.turns):
                    turn(f"bench{index % 20}")
                for name, values in cpu.items():
                    medians.setdefault(name, []).append(1000 * sum(values) / len(values))

        measure()
        alone = dict(medians)
        medians.clear()
        worker = threading.Thread(target=measure)
        worker.start()
        spins = 0
        while worker.is_alive():  # the busy event loop's stand-in: pure Python, never sleeping
            spins += 1
        engine.dispose()
    print(f"CPU ms per call (thread_time), mean of {args.turns} turns; median of {args.reps} reps:")
    _print(alone)
    print("the same calls in a worker thread beside a busy main thread:")
    _print(medians, alone)


def _print(medians: dict[str, list[float]], alone: dict[str, list[float]] | None = None) -> None:
    total = total_alone = 0.0
    for name, values in medians.items():
        total += statistics.median(values)
        line = f"  {name:13s} {statistics.median(values):6.3f}   reps: " + " ".join(
            f"{v:.3f}" for v in values
        )
        print(line)
    if alone is not None:
        total_alone = sum(statistics.median(values) for values in alone.values())
        print(f"  {'per turn':13s} {total:6.3f}   ({total / total_alone:.1f}x the calls alone)")
    else:
        print(f"  {'per turn':13s} {total:6.3f}")


if __name__ == "__main__":
    main()
