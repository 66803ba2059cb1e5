"""The production server's event loop (issue 18).

Granian, which ``reflex run --env prod`` serves the backend with, takes uvloop when it is
installed (its default ``loop="auto"``). On the default asyncio loop each streamed chunk's send
cost about three times as much (a quarter of the backend's event-loop time at 20 concurrent
streams, profiled with py-spy), so uvloop is pinned in requirements.txt; these tests fail if it
goes missing or granian stops choosing it.
"""

from __future__ import annotations

import asyncio

from granian._loops import loops  # what Granian(loop="auto") builds; no public accessor

from bench import event_loop


def test_granian_builds_a_uvloop_loop_for_the_backend() -> None:
    loop = loops.get("auto")
    try:
        assert type(loop).__module__.startswith("uvloop"), type(loop)
    finally:
        loop.close()
        asyncio.set_event_loop(None)  # the builder made it current: leave no closed loop behind


def test_the_benches_run_their_in_process_consumers_on_the_same_loop() -> None:
    async def kind() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert event_loop.loop_name() == "uvloop"
    assert event_loop.run(kind()).startswith("uvloop")
