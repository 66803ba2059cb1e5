"""Hand one execution of a schedule to the run pipeline, and consume it in the background.

There is no scheduler-specific copy of admission, metering or finalisation: an execution
is a :class:`~ventapp.agent.pipeline.ChatRequest` admitted by
:func:`~ventapp.agent.pipeline.start_chat` in a session of its own (invariant 1:
thread_id = session_id), with the schedule's mode, recorded with ``kind="schedule"``.
Its events are consumed by the *run log* sink here (DESIGN.md, "The one idea"): a
background task that iterates :meth:`ChatRun.events`, so finalisation (answer saved,
usage settled, status written) happens exactly as for a chat turn.

Order of one execution:

1. claim the tick in the database (:func:`~ventapp.db.schedule_store.claim_tick`) under
   the schedule's in-process lock — cron ticks and "run now" share it;
2. admit it through the pipeline; a refusal (quota, unpriced model, gate full) closes
   the claim as ``rejected`` with the admission's code and sentence;
3. link the claim to the pipeline run; from then on its status is the run's;
4. consume the events in a background task (:class:`Executions`), which shutdown stops
   and waits for before the checkpointer closes (spec 002, "取消收尾").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from ventapp.agent.chat_run import ChatRun
from ventapp.agent.errors import SHUTDOWN
from ventapp.agent.live_runs import logged_events
from ventapp.agent.pipeline import ChatRejected, ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.db import schedule_store
from ventapp.db.schedule_models import Schedule
from ventapp.db.schedule_store import Claim
from ventapp.i18n import DEFAULT_LANG
from ventapp.scheduler.run_errors import NOT_STARTED, stored_sentence

logger = logging.getLogger(__name__)

TITLE_CHARS = 200


@dataclass(frozen=True)
class Handoff:
    """The outcome of one attempt to execute a schedule.

    Attributes:
        claim: What the database claim decided (``claimed``, ``skipped``, ``busy``, ``taken``).
        run_id: The pipeline run executing it (``claimed`` and admitted), else None.
        session_id: The session it runs in, else None.
        rejected: The admission's refusal when the claim was won but the pipeline said no.
    """

    claim: Claim
    run_id: str | None = None
    session_id: str | None = None
    rejected: ChatRejected | None = None


def session_title(schedule: Schedule, fire_time: datetime, tz: tzinfo) -> str:
    """``"<name> · 2026-12-01 08:00"``: the schedule and its fire time in ``SCHEDULER_TZ``."""
    local = (
        fire_time.replace(tzinfo=UTC).astimezone(tz) if fire_time.tzinfo is None else fire_time.astimezone(tz)
    )
    suffix = f" · {local:%Y-%m-%d %H:%M}"
    return schedule.name[: TITLE_CHARS - len(suffix)] + suffix


class Executions:
    """The scheduled runs this process is consuming: ``run_id -> (run, task)``."""

    def __init__(self) -> None:
        self._running: dict[str, tuple[ChatRun, asyncio.Task[None]]] = {}

    def __len__(self) -> int:
        return len(self._running)

    def consume(self, run: ChatRun) -> asyncio.Task[None]:
        """Start the run-log sink of an admitted run; it finalises whatever happens."""
        task = asyncio.create_task(self._sink(run), name=f"schedule-run-{run.run_id}")
        self._running[run.run_id] = (run, task)
        return task

    async def _sink(self, run: ChatRun) -> None:
        try:
            # Through the run log, so a tab opening the session follows the scheduled run live.
            async for event in logged_events(run.runtime.run_log, run):
                if event.type == "error":
                    logger.info("scheduled run %s ended with %s", run.run_id, getattr(event, "code", "?"))
        except Exception:
            logger.exception("scheduled run %s (trace %s) failed in its sink", run.run_id, run.trace_id)
        finally:
            self._running.pop(run.run_id, None)

    async def wait(self, run_id: str) -> None:
        """Until the run's sink has finished (its finalisation included); at once if unknown."""
        entry = self._running.get(run_id)
        if entry is not None:
            await asyncio.shield(entry[1])

    async def stop_all(self, timeout_s: float = 30.0) -> None:
        """Stop every running execution and wait for their finalisation (shutdown).

        A run whose graph has not started yet cannot be stopped at once, so the stop is
        repeated until every sink has finished; past ``timeout_s`` the sinks are cancelled
        (their finalisation is shielded, so it still completes).
        """
        deadline = time.monotonic() + timeout_s
        while self._running:
            for run, _task in list(self._running.values()):
                run.request_stop(SHUTDOWN)
            tasks = [task for _run, task in self._running.values()]
            await asyncio.wait(tasks, timeout=0.1)
            if time.monotonic() > deadline:
                for task in tasks:
                    task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.gather(*tasks, return_exceptions=True)
                break


def schedule_request(schedule: Schedule, scheduled_for: datetime, tz: tzinfo) -> ChatRequest:
    """The chat turn one execution of ``schedule`` submits: its prompt, for its owner, in a new
    session titled for the tick, in the schedule's language (``zh-CN`` if none): the model is asked
    to answer in it as in the UI the schedule was made in, and the figures are worded in it."""
    return ChatRequest(
        message=schedule.prompt,
        user_name=schedule.user_name,
        mode=schedule.mode,
        title=session_title(schedule, scheduled_for, tz),
        kind="schedule",
        lang=schedule.lang or DEFAULT_LANG,
        words_lang=schedule.lang or DEFAULT_LANG,
    )


async def execute(
    runtime: AgentRuntime,
    executions: Executions,
    schedule: Schedule,
    *,
    trigger: str,
    scheduled_for: datetime,
    tz: tzinfo,
) -> Handoff:
    """Claim and start one execution of ``schedule`` (the caller holds the schedule's lock).

    Args:
        runtime: The process runtime (pipeline, database).
        executions: Where the admitted run is consumed.
        schedule: What to run and for whom.
        trigger: ``cron`` or ``manual``.
        scheduled_for: The tick's fire time (naive UTC), or when "run now" was pressed.
        tz: ``SCHEDULER_TZ``, for the session's title.

    Returns:
        The claim's outcome and, when admitted, the run and session ids.
    """
    engine = runtime.engine
    claim = await asyncio.to_thread(
        schedule_store.claim_tick, engine, schedule.id, schedule.user_name, trigger, scheduled_for
    )
    if claim.outcome != "claimed" or claim.row_id is None:
        return Handoff(claim)
    request = schedule_request(schedule, scheduled_for, tz)
    try:
        run = await start_chat(runtime, request)
    except ChatRejected as refused:
        await asyncio.to_thread(
            schedule_store.close_claim, engine, claim.row_id, "rejected", refused.code, refused.message
        )
        logger.info("schedule %s: %s run refused (%s)", schedule.id, trigger, refused.code)
        return Handoff(claim, rejected=refused)
    except Exception:
        logger.exception("schedule %s: %s run could not be admitted", schedule.id, trigger)
        await asyncio.to_thread(
            schedule_store.close_claim,
            engine,
            claim.row_id,
            "failed",
            "internal",
            stored_sentence(NOT_STARTED),  # English; worded per reader (scheduler.run_errors)
        )
        raise
    try:
        await asyncio.to_thread(schedule_store.attach_run, engine, claim.row_id, run.run_id, run.session_id)
    finally:
        executions.consume(run)  # admitted: it must be consumed (and finalised) whatever happens
    return Handoff(claim, run.run_id, run.session_id)
