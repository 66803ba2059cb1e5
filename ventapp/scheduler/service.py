"""The schedule service: owners' schedules, their APScheduler jobs, and firing them.

One source of truth: the ``schedules`` table. APScheduler 3 (``AsyncIOScheduler``, the
in-memory job store) only holds a job per enabled schedule, rebuilt from the table at
start-up, after every change made here, and every ``SYNC_INTERVAL_S`` (so that a change
made by another process serving the same database is picked up). Whether a tick runs is
decided by the database claim, never by which process's job fired first.

Times: cron fields are read in ``SCHEDULER_TZ`` (default Asia/Shanghai, spec 002), never
the host's zone; stored times are naive UTC; ``clock`` returns an aware UTC ``datetime``
and is injected by tests instead of sleeping.

A tick missed while no process was running (found at start-up) runs once if it is at most
``SCHEDULER_MISFIRE_GRACE_S`` late, otherwise it is recorded as ``missed`` — only the newest
such tick per schedule, so a long outage never starts a catch-up storm.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.events import EVENT_JOB_MISSED, JobExecutionEvent
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger

from ventapp.agent.runtime import AgentRuntime
from ventapp.db import schedule_store
from ventapp.db.schedule_models import Schedule
from ventapp.db.schedule_store import RunRecord
from ventapp.i18n import resolve_lang
from ventapp.scheduler.cron import CronInvalid, latest_fire_between, next_fire_times, parse_cron
from ventapp.scheduler.execution import Executions, Handoff, execute
from ventapp.scheduler.rules import ScheduleRejected, not_found, refusal, validated
from ventapp.scheduler.run_errors import MISSED_LATE, stored_sentence

logger = logging.getLogger(__name__)

SYNC_INTERVAL_S = 60
"""Seconds between re-reads of the table (changes made by other processes)."""
UNLINKED_CLAIM_S = 60
"""A claim this old without a pipeline run was left by a process that died."""
JOB_PREFIX = "schedule:"

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


class ScheduleService:
    """Schedules of every user in this process. Open with :meth:`start`, close with :meth:`shutdown`.

    Args:
        runtime: The process runtime; executions go through its pipeline.
        clock: Returns "now" as an aware datetime (tests inject one).
    """

    def __init__(self, runtime: AgentRuntime, clock: Clock | None = None) -> None:
        self.runtime = runtime
        self.tz = ZoneInfo(runtime.settings.scheduler_tz)
        self.grace_s = runtime.settings.scheduler_misfire_grace_s
        self.clock: Clock = clock or _utc_now
        self.executions = Executions()
        self._locks: dict[str, asyncio.Lock] = {}
        self._jobs: dict[str, tuple[str, datetime]] = {}
        """schedule_id -> (cron, updated_at) of the job APScheduler holds for it."""
        self._scheduler = AsyncIOScheduler(
            timezone=self.tz,
            job_defaults={"coalesce": True, "misfire_grace_time": max(1, self.grace_s), "max_instances": 4},
        )
        self._scheduler.add_listener(self._on_missed, EVENT_JOB_MISSED)
        self._background: set[asyncio.Task[Any]] = set()
        self._handoffs: set[asyncio.Task[Handoff | None]] = set()
        """Ticks being claimed and admitted (:meth:`fire`); shutdown lets them finish, then stops their runs."""
        self._closing = False

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Sweep dead claims, run or record ticks missed while down, build the jobs, start firing."""
        engine = self.runtime.engine
        swept = await asyncio.to_thread(
            schedule_store.sweep_unlinked,
            engine,
            _naive_utc(self.clock() - timedelta(seconds=UNLINKED_CLAIM_S)),
        )
        if swept:
            logger.warning("marked %d schedule claim(s) left by a stopped process as interrupted", swept)
        await self.catch_up()
        await self.sync()
        self._scheduler.start()
        self._scheduler.add_job(
            self._periodic_sync, "interval", seconds=SYNC_INTERVAL_S, id="schedules-sync", coalesce=True
        )

    async def shutdown(self) -> None:
        """Stop firing, stop running executions and wait for their finalisation (spec 002).

        A tick being handed over (claimed, admitted, not consumed yet) finishes its hand-off
        first, so that its run is one of those stopped: APScheduler's shutdown cancels its job
        mid-way, which used to leave the admitted run ``running`` and its claim unlinked.
        """
        self._closing = True
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        await asyncio.gather(*self._handoffs, return_exceptions=True)
        await self.executions.stop_all()
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    @property
    def firing(self) -> bool:
        """True while APScheduler runs (ticks fire); False before start and after shutdown."""
        return bool(self._scheduler.running)

    @property
    def job_count(self) -> int:
        """Enabled schedules with a job (``/health``)."""
        return len(self._jobs)

    async def sync(self) -> None:
        """Make APScheduler's jobs match the enabled schedules in the table."""
        schedules = await asyncio.to_thread(schedule_store.list_schedules, self.runtime.engine)
        wanted = {s.id: s for s in schedules if s.enabled}
        for schedule_id in list(self._jobs):
            schedule = wanted.get(schedule_id)
            if schedule is None or self._jobs[schedule_id] != (schedule.cron, schedule.updated_at):
                self._remove_job(schedule_id)
        for schedule in wanted.values():
            if schedule.id in self._jobs:
                continue
            try:
                trigger = self.trigger(schedule.cron)
            except CronInvalid as bad:
                logger.warning(
                    "schedule %s has an unusable cron %r (%s); not scheduled", schedule.id, schedule.cron, bad
                )
                continue
            self._scheduler.add_job(
                self.on_tick, trigger, id=JOB_PREFIX + schedule.id, args=[schedule.id], replace_existing=True
            )
            self._jobs[schedule.id] = (schedule.cron, schedule.updated_at)

    def _remove_job(self, schedule_id: str) -> None:
        self._jobs.pop(schedule_id, None)
        job = self._scheduler.get_job(JOB_PREFIX + schedule_id)
        if job is not None:
            job.remove()

    async def _periodic_sync(self) -> None:
        try:
            await asyncio.to_thread(
                schedule_store.sweep_unlinked,
                self.runtime.engine,
                _naive_utc(self.clock() - timedelta(seconds=UNLINKED_CLAIM_S)),
            )
            await self.sync()
        except Exception:
            logger.exception("could not re-read the schedules table")

    # --- time ------------------------------------------------------------------------------

    def trigger(self, cron: str) -> BaseTrigger:
        """The trigger of ``cron`` in ``SCHEDULER_TZ``. Raises :class:`CronInvalid`."""
        return parse_cron(cron, self.tz)

    def next_run_at(self, schedule: Schedule) -> datetime | None:
        """The next fire time after now (aware, ``SCHEDULER_TZ``); None when disabled."""
        if not schedule.enabled:
            return None
        try:
            upcoming = next_fire_times(self.trigger(schedule.cron), self.clock().astimezone(self.tz), 1)
        except CronInvalid:
            return None
        return upcoming[0] if upcoming else None

    def preview(self, cron: str, count: int = 5) -> list[datetime]:
        """The next ``count`` fire times of an expression (the form's preview). Raises :class:`CronInvalid`."""
        return next_fire_times(self.trigger(cron), self.clock().astimezone(self.tz), count)

    # --- firing ----------------------------------------------------------------------------

    def _lock(self, schedule_id: str) -> asyncio.Lock:
        return self._locks.setdefault(schedule_id, asyncio.Lock())

    async def fire(self, schedule_id: str, scheduled_for: datetime, trigger: str = "cron") -> Handoff | None:
        """Execute one tick (or "run now") of a schedule; None when the schedule is gone or paused,
        or the service is shutting down (a tick is then caught up at the next start).

        The hand-off runs in a task of its own that cancelling the caller does not stop (APScheduler
        cancels its jobs at shutdown): once claimed, a tick is always linked to its run and consumed.

        Args:
            schedule_id: The schedule.
            scheduled_for: The tick's fire time (aware, or naive UTC); for ``manual``, now.
            trigger: ``cron`` or ``manual``.
        """
        if self._closing:
            return None
        handoff = asyncio.ensure_future(self._hand_over(schedule_id, scheduled_for, trigger))
        self._handoffs.add(handoff)
        handoff.add_done_callback(self._handoffs.discard)
        return await asyncio.shield(handoff)

    async def _hand_over(self, schedule_id: str, scheduled_for: datetime, trigger: str) -> Handoff | None:
        if scheduled_for.tzinfo is not None:
            scheduled_for = _naive_utc(scheduled_for)
        async with self._lock(schedule_id):  # cron and manual share the schedule's exclusion
            schedule = await asyncio.to_thread(schedule_store.get_schedule, self.runtime.engine, schedule_id)
            if schedule is None or (trigger == "cron" and not schedule.enabled):
                return None
            return await execute(
                self.runtime,
                self.executions,
                schedule,
                trigger=trigger,
                scheduled_for=scheduled_for,
                tz=self.tz,
            )

    async def on_tick(self, schedule_id: str) -> None:
        """APScheduler's job: fire the tick that is due now (the newest fire time ≤ now)."""
        now = self.clock()
        try:
            trigger = self.trigger(self._jobs.get(schedule_id, ("",))[0])
        except CronInvalid:
            return
        tick = latest_fire_between(trigger, now - timedelta(seconds=self.grace_s + 1), now)
        if tick is None:
            return
        try:
            await self.fire(schedule_id, tick)
        except Exception:
            logger.exception("schedule %s: the tick at %s failed to start", schedule_id, tick.isoformat())

    def _on_missed(self, event: JobExecutionEvent) -> None:
        """APScheduler found a job too late to run (the loop was blocked): record ``missed``."""
        if not event.job_id.startswith(JOB_PREFIX):
            return
        task = asyncio.ensure_future(
            self._record_missed(event.job_id.removeprefix(JOB_PREFIX), _naive_utc(event.scheduled_run_time))
        )
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _record_missed(self, schedule_id: str, tick: datetime) -> None:
        schedule = await asyncio.to_thread(schedule_store.get_schedule, self.runtime.engine, schedule_id)
        if schedule is not None:
            await asyncio.to_thread(
                schedule_store.record_tick,
                self.runtime.engine,
                schedule.id,
                schedule.user_name,
                tick,
                "missed",
                error_code="missed",
                # English, from the catalogue: pages and the API word it again with its seconds.
                error=stored_sentence(MISSED_LATE, seconds=self.grace_s),
            )

    async def catch_up(self) -> None:
        """At start-up: run each schedule's newest missed tick if within the grace, else record it."""
        now = self.clock()
        schedules = await asyncio.to_thread(schedule_store.list_schedules, self.runtime.engine)
        for schedule in schedules:
            if not schedule.enabled:
                continue
            try:
                trigger = self.trigger(schedule.cron)
            except CronInvalid:
                continue
            last = await asyncio.to_thread(schedule_store.latest_cron_tick, self.runtime.engine, schedule.id)
            since = max(schedule.armed_at, last) if last is not None else schedule.armed_at
            tick = latest_fire_between(trigger, since.replace(tzinfo=UTC), now)
            if tick is None:
                continue
            if (now - tick).total_seconds() <= self.grace_s:
                logger.info(
                    "schedule %s: running the tick of %s missed while down", schedule.id, tick.isoformat()
                )
                await self.fire(schedule.id, tick)
            else:
                await self._record_missed(schedule.id, _naive_utc(tick))

    # --- owners' operations ---------------------------------------------------------------

    async def owned(self, schedule_id: str, user_name: str) -> Schedule:
        """The user's schedule. Raises :class:`ScheduleRejected` 404 for anyone else's (never 403)."""
        schedule = await asyncio.to_thread(schedule_store.get_schedule, self.runtime.engine, schedule_id)
        if schedule is None or schedule.user_name != user_name:
            raise not_found()
        return schedule

    async def list_for(self, user_name: str) -> list[Schedule]:
        """The user's schedules, oldest first."""
        return list(await asyncio.to_thread(schedule_store.list_schedules, self.runtime.engine, user_name))

    async def create(self, user_name: str, fields: dict[str, Any], lang: str | None = None) -> Schedule:
        """Create a schedule from ``{name, prompt, cron, mode?, enabled?, lang?}``. Raises 422 on bad fields.

        ``lang``: the creator's language (the page's, the API request's), which its runs word
        their figures in unless ``fields`` names one; None: ``zh-CN``.
        """
        values = {"lang": resolve_lang(lang) if lang else None, **validated(fields, self.tz, partial=False)}
        schedule = Schedule(user_name=user_name, **values)
        schedule = await asyncio.to_thread(schedule_store.create_schedule, self.runtime.engine, schedule)
        await self.sync()
        return schedule

    async def update(self, schedule_id: str, user_name: str, fields: dict[str, Any]) -> Schedule:
        """Change any subset of ``{name, prompt, cron, mode, enabled, lang}``. Raises 404 / 422."""
        current = await self.owned(schedule_id, user_name)
        values = validated(fields, self.tz, partial=True)
        # A new expression, or re-enabling, starts counting ticks afresh: nothing is "missed" before.
        rearm = ("cron" in values and values["cron"] != current.cron) or (
            values.get("enabled") is True and not current.enabled
        )
        updated = await asyncio.to_thread(
            schedule_store.update_schedule, self.runtime.engine, current.id, values, rearm=rearm
        )
        if updated is None:
            raise not_found()
        await self.sync()
        return updated

    async def set_enabled(self, schedule_id: str, user_name: str, enabled: bool) -> Schedule:
        """Pause (False) or resume (True) a schedule."""
        return await self.update(schedule_id, user_name, {"enabled": enabled})

    async def delete(self, schedule_id: str, user_name: str) -> None:
        """Delete a schedule and its run records; the sessions its runs created stay."""
        schedule = await self.owned(schedule_id, user_name)
        await asyncio.to_thread(schedule_store.delete_schedule, self.runtime.engine, schedule.id)
        await self.sync()

    async def run_now(self, schedule_id: str, user_name: str) -> Handoff:
        """Start an execution now (paused schedules too); it goes on in the background.

        Raises:
            ScheduleRejected: 404 (not the user's), 409 ``schedule_busy`` (an execution is
                still running), or the pipeline's refusal (429 quota or gate, 503 unpriced),
                which is also recorded as a ``rejected`` run.
        """
        schedule = await self.owned(schedule_id, user_name)
        handoff = await self.fire(schedule.id, self.clock(), trigger="manual")
        if handoff is None:
            if self._closing:
                raise refusal(503, "shutting_down", "refusal.shutting_down", retry_after=5)
            raise not_found()
        if handoff.rejected is not None:
            raise ScheduleRejected.passed_on(handoff.rejected)
        if handoff.claim.outcome != "claimed" or handoff.run_id is None:
            raise refusal(409, "schedule_busy", "schedules.error.schedule_busy")
        return handoff

    async def runs(self, schedule_id: str, user_name: str, limit: int = 50) -> list[RunRecord]:
        """The schedule's runs, newest first, each with its effective status."""
        schedule = await self.owned(schedule_id, user_name)
        return await asyncio.to_thread(schedule_store.list_runs, self.runtime.engine, schedule.id, limit)

    async def last_runs(self, schedules: list[Schedule]) -> dict[str, RunRecord]:
        """``schedule_id -> newest run`` for a page of schedules."""
        return await asyncio.to_thread(
            schedule_store.latest_runs, self.runtime.engine, [s.id for s in schedules]
        )

    async def waiting(self, user_name: str) -> list[RunRecord]:
        """The user's schedule runs waiting for a person (an approval, a question or a plan)."""
        return await asyncio.to_thread(schedule_store.waiting_runs, self.runtime.engine, user_name)


_current: ScheduleService | None = None


def set_service(service: ScheduleService | None) -> None:
    """Install (or clear) the process's schedule service; called by the app lifespan."""
    global _current
    _current = service


def get_service() -> ScheduleService:
    """The process's schedule service.

    Raises:
        RuntimeError: The app's lifespan has not started it (yet).
    """
    if _current is None:
        raise RuntimeError("The schedule service is not started; it opens in the app's lifespan task.")
    return _current
