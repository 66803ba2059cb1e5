"""Live runs: every admitted run streams into its log, and every client reads from there (issue 11).

A run is no longer read by the client that started it: :func:`go_live` hands it to a task
of its own that iterates :meth:`ChatRun.events` and writes each event to the runtime's
:class:`~ventapp.agent.run_log.RunLog`. Clients — the API stream that admitted the run, a
browser tab, a client joining with ``GET /api/chat/stream`` — follow the log with
:meth:`RunLog.frames`. So a client that goes away costs the run nothing, and whether its
leaving stops the run is the client's choice: ``POST /api/chat`` stops it (spec 002) unless
sent with ``detach=1``; the UI never does (a closed tab is not a Stop).

Scheduled runs are consumed by their own sink; :func:`logged_events` writes their events
to the same log as they pass, so a tab opening a scheduled run's session follows it too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

from ventapp.agent.chat_run import ChatRun
from ventapp.agent.events import ContractEvent
from ventapp.agent.run_log import LogFrame, LogGap, LoggedRun, LogState, RunLog
from ventapp.db import chat_store

logger = logging.getLogger(__name__)


def logged_run(run: ChatRun) -> LoggedRun:
    """The log's record of ``run`` (ids and owner; a resumed run's paused part's last ``seq``)."""
    return LoggedRun(
        run_id=run.run_id,
        session_id=run.session_id,
        user_name=run.user_name,
        trace_id=run.trace_id,
        numbered_after=run.numbered_after,
    )


async def _keep_numbering(run: ChatRun, frame: LogFrame) -> None:
    """A run that paused: keep its last frame's number with it, for its resumed part's numbering.

    The log forgets the paused part ``RUN_LOG_TTL_S`` after it closes; an approval given later
    would otherwise number from 1 again, and a client's ``Last-Event-ID`` would skip frames.
    """
    if frame.event.type != "interrupt":
        return
    try:
        await asyncio.to_thread(chat_store.keep_last_seq, run.runtime.engine, run.run_id, frame.seq)
    except Exception:  # the database refuses writes: numbering falls back to what the log keeps
        logger.warning("run %s (trace %s): its paused frame number was not kept", run.run_id, run.trace_id)


async def logged_events(log: RunLog, run: ChatRun) -> AsyncIterator[ContractEvent]:
    """Iterate the run's events, writing each to ``log`` before it is passed on.

    The log is opened before the first event and closed however the iteration ends (the
    run finished, or the consumer left and the run was finalised as ``cancelled``).
    """
    await log.open(logged_run(run))
    try:
        async for event in run.events():
            await _keep_numbering(run, await log.append(run.run_id, event))
            yield event
    finally:
        await log.close(run.run_id)


CLOSING_FRAMES = frozenset({"done", "error", "interrupt"})
SLOW_CLOSE_S = 1.0
"""A closing frame later than this after the frame before it is logged (a stop or save that lagged)."""


async def _drive(log: RunLog, run: ChatRun) -> None:
    previous = time.monotonic()
    try:
        async for event in run.events():
            await _keep_numbering(run, await log.append(run.run_id, event))
            now = time.monotonic()
            if event.type in CLOSING_FRAMES and now - previous > SLOW_CLOSE_S:
                # The save and settlement sit between the last frame and the closing one.
                logger.info(
                    "run %s (trace %s): its closing %r frame came %.1f s after the frame before it",
                    run.run_id,
                    run.trace_id,
                    event.type,
                    now - previous,
                )
            previous = now
    except Exception:  # the run turns failures into error frames: this is a bug, and logged
        logger.exception("live run %s (trace %s) failed in its driver", run.run_id, run.trace_id)
    finally:
        await log.close(run.run_id)


async def go_live(log: RunLog, run: ChatRun, track: bool = True) -> int:
    """Start the admitted ``run`` on a task of its own, writing every event to ``log``.

    The log is open when this returns, so a reader starting now misses nothing. The task
    finalises the run whatever happens; cancelling it (shutdown) ends the run ``cancelled``.

    Args:
        log: The runtime's run log.
        run: An admitted run whose events nobody has iterated.
        track: Keep the task in the runtime's background set (waited for at shutdown).

    Returns:
        The ``seq`` to read after for all of this run's frames (0, or for a resumed run
        the paused part's last number).
    """
    after = await log.open(logged_run(run))
    task = asyncio.create_task(_drive(log, run), name=f"live-{run.run_id}")
    if track:
        run.runtime.track(task)
    return after


async def live_state(log: RunLog, session_id: str, user_name: str) -> LogState | None:
    """The session's current or just-ended run, if it is ``user_name``'s; else None."""
    state = await log.current(session_id)
    if state is None or state.run.user_name != user_name:
        return None
    return state


async def until_closed(log: RunLog, run_id: str, after: int, pace_s: float = 0.5) -> None:
    """Return once the run's log is closed (it ended, paused, or its log expired).

    For a reader that only needs the end (a tab whose message the run refused): it wakes at most
    about every ``pace_s`` however fast the run streams, each wake taking the whole backlog in one
    batch, so a waiting tab costs the run nothing per token.

    Args:
        log: The runtime's run log.
        run_id: The run.
        after: A ``seq`` the run has reached (frames before it are not read).
        pace_s: Seconds between two reads of the log, > 0.
    """
    try:
        async for _ in log.batches(run_id, after):
            await asyncio.sleep(pace_s)
    except (KeyError, LogGap):  # expired, or trimmed/resumed past ``after``: look again
        return
