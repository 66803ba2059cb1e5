"""The schedule service in-process against the scripted model: hand-off to the pipeline, billing,
overlap, races, misfires, restart and shutdown. Time comes from an injected clock, never sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from apscheduler.events import EVENT_JOB_MISSED, JobExecutionEvent

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.runtime import AgentRuntime
from ventapp.billing import reports
from ventapp.config import load_settings
from ventapp.db import chat_store, schedule_store
from ventapp.db.schedule_models import Schedule
from ventapp.scheduler.rules import ScheduleRejected
from ventapp.scheduler.service import ScheduleService

USER = "engineer"
BEIJING_0900_UTC = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)


class Clock:
    """An injected "now" (aware UTC) that tests move by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedServer]:
    # One server per async test: langchain-openai caches its async client per base_url and loop.
    with ScriptedServer() as server:
        yield server


def _settings(tmp_path: Path, base_url: str, **extra: str):  # type: ignore[no-untyped-def]  # Settings
    return load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "DATA_DIR": str(tmp_path),
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "x",
            "MODEL_NAME": "scripted-demo",
            "MODEL_MAX_RETRIES": "0",
            **extra,
        }
    )


@pytest.fixture
async def opened(tmp_path: Path, llm: ScriptedServer) -> AsyncIterator[Callable[..., ScheduleService]]:
    """``make(clock=None)`` → a service on one runtime; everything is closed at the end."""
    runtime = await AgentRuntime.open(_settings(tmp_path, llm.base_url))
    services: list[ScheduleService] = []

    def make(clock: Clock | None = None) -> ScheduleService:
        services.append(ScheduleService(runtime, clock=clock))
        return services[-1]

    try:
        yield make
    finally:
        for service in services:
            await service.shutdown()
        await runtime.close()


async def _create(service: ScheduleService, **fields: object) -> Schedule:
    return await service.create(
        USER, {"name": "Gas report", "prompt": "hello gas", "cron": "0 9 * * *", **fields}
    )


async def test_run_now_goes_through_the_pipeline_and_is_billed(opened, llm: ScriptedServer) -> None:  # type: ignore[no-untyped-def]
    service = opened()
    schedule = await _create(service, mode="plan")
    handoff = await service.run_now(schedule.id, USER)
    await service.executions.wait(handoff.run_id or "")
    engine = service.runtime.engine

    run = chat_store.get_run(engine, handoff.run_id or "")
    assert run is not None and run.kind == "schedule" and run.status == "success" and run.user_name == USER
    session = chat_store.get_session(engine, handoff.session_id or "")
    assert session is not None and session.user_name == USER and session.mode == "plan"
    assert session.title.startswith("Gas report · "), "titled after the schedule and its fire time"
    messages = chat_store.list_messages(engine, session.id)
    assert [m.role for m in messages] == ["user", "assistant"] and messages[0].content == "hello gas"
    assert "hello gas" in messages[1].content
    owner, ledger = reports.run_usage(engine, run.id)
    assert owner == USER and len(ledger) == len(llm.requests()) >= 1, "every model call is on the ledger"
    [record] = await service.runs(schedule.id, USER)
    assert record.trigger == "manual" and record.status == "success" and record.session_id == session.id
    assert record.input_tokens == run.input_tokens > 0 and record.cost_micros > 0


async def test_overlapping_tick_is_skipped_and_shutdown_finalises_the_run(
    opened, llm: ScriptedServer
) -> None:  # type: ignore[no-untyped-def]
    llm.app.state.scripted.delay_ms = 30  # a 200-word answer streams for seconds: still running below
    service = opened()
    schedule = await _create(service, prompt="a long answer please")
    first = await service.fire(schedule.id, BEIJING_0900_UTC)
    assert first is not None and first.claim.outcome == "claimed"
    second = await service.fire(schedule.id, BEIJING_0900_UTC + timedelta(days=1))
    assert second is not None and second.claim.outcome == "skipped" and second.run_id is None

    await service.shutdown()  # stops the running execution and waits for its finalisation
    run = chat_store.get_run(service.runtime.engine, first.run_id or "")
    assert run is not None and run.status == "cancelled" and run.finished_at is not None
    answer = chat_store.list_messages(service.runtime.engine, first.session_id or "")[-1]
    assert answer.role == "assistant" and answer.status == "cancelled", "the partial answer was saved"
    statuses = [(r.scheduled_for.date().isoformat(), r.status) for r in await service.runs(schedule.id, USER)]
    assert statuses == [("2026-12-02", "skipped"), ("2026-12-01", "cancelled")]


async def test_shutdown_while_a_tick_is_handed_over_stops_its_run_too(opened, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """APScheduler's shutdown cancels a job mid-hand-off: the admitted run was left ``running``."""
    from ventapp.scheduler import execution

    admitted, release = asyncio.Event(), asyncio.Event()

    async def slow_start_chat(*args: object, **kwargs: object) -> object:
        run = await real_start_chat(*args, **kwargs)
        admitted.set()
        await release.wait()  # the claim is not linked yet, nor the run consumed
        return run

    real_start_chat = execution.start_chat
    monkeypatch.setattr(execution, "start_chat", slow_start_chat)
    service = opened(Clock(BEIJING_0900_UTC + timedelta(milliseconds=300)))
    schedule = await _create(service)
    service._scheduler.start()
    service._scheduler.add_job(service.on_tick, "date", args=[schedule.id], id="tick-now")
    await asyncio.wait_for(admitted.wait(), 10)

    stopping = asyncio.create_task(service.shutdown())
    await asyncio.sleep(0.05)
    release.set()
    await stopping
    [record] = await service.runs(schedule.id, USER)
    assert record.run_id is not None and record.status == "cancelled", "linked, stopped, finalised"
    run = chat_store.get_run(service.runtime.engine, record.run_id)
    assert run is not None and run.status == "cancelled" and run.finished_at is not None
    assert not service.executions
    assert await service.fire(schedule.id, BEIJING_0900_UTC + timedelta(days=1)) is None, (
        "a stopped service starts no tick: the next start catches it up"
    )
    with pytest.raises(ScheduleRejected) as refused:
        await service.run_now(schedule.id, USER)
    assert (refused.value.status, refused.value.code) == (503, "shutting_down")
    assert refused.value.worded("zh-CN") == "服务器正在关闭，请稍后再试。"


async def test_two_schedulers_racing_on_one_tick_fire_it_once(opened, llm: ScriptedServer) -> None:  # type: ignore[no-untyped-def]
    one, two = opened(), opened()
    schedule = await _create(one)
    results = await asyncio.gather(*(s.fire(schedule.id, BEIJING_0900_UTC) for s in (one, two, one, two)))
    outcomes = sorted(result.claim.outcome for result in results if result is not None)
    assert outcomes == ["claimed", "taken", "taken", "taken"]
    for service in (one, two):
        for result in results:
            if result is not None and result.run_id:
                await service.executions.wait(result.run_id)
    assert len(await one.runs(schedule.id, USER)) == 1
    assert sum(1 for body in llm.requests() if "hello gas" in str(body)) == 1, "the model ran once"


async def test_a_tick_fires_from_the_clock_and_not_when_paused(opened) -> None:  # type: ignore[no-untyped-def]
    clock = Clock(BEIJING_0900_UTC + timedelta(milliseconds=300))
    service = opened(clock)
    schedule = await _create(service)
    await service.sync()
    await service.on_tick(schedule.id)
    [record] = await service.runs(schedule.id, USER)
    assert record.trigger == "cron" and record.scheduled_for == BEIJING_0900_UTC.replace(tzinfo=None)
    await service.executions.wait(record.run_id or "")
    assert service.next_run_at(schedule).isoformat() == "2026-12-02T09:00:00+08:00"  # type: ignore[union-attr]

    await service.set_enabled(schedule.id, USER, False)
    assert await service.fire(schedule.id, BEIJING_0900_UTC + timedelta(days=1)) is None
    assert len(await service.runs(schedule.id, USER)) == 1


async def _armed(service: ScheduleService, armed_at: datetime) -> Schedule:
    return schedule_store.create_schedule(
        service.runtime.engine,
        Schedule(user_name=USER, name="daily", prompt="hello gas", cron="0 9 * * *", armed_at=armed_at),
    )


async def test_a_tick_missed_while_down_runs_once_within_the_grace(opened) -> None:  # type: ignore[no-untyped-def]
    service = opened(Clock(BEIJING_0900_UTC + timedelta(seconds=120)))
    schedule = await _armed(service, datetime(2026, 11, 20))  # ten ticks were missed: no storm
    await service.catch_up()
    [record] = await service.runs(schedule.id, USER)
    assert record.trigger == "cron" and record.scheduled_for == datetime(2026, 12, 1, 1, 0)
    await service.executions.wait(record.run_id or "")
    assert (await service.runs(schedule.id, USER))[0].status == "success"
    await service.catch_up()  # a second start-up owes nothing more
    assert len(await service.runs(schedule.id, USER)) == 1


async def test_a_tick_missed_beyond_the_grace_is_recorded_missed(opened) -> None:  # type: ignore[no-untyped-def]
    service = opened(Clock(BEIJING_0900_UTC + timedelta(seconds=301)))
    schedule = await _armed(service, datetime(2026, 11, 20))
    await service.catch_up()
    [record] = await service.runs(schedule.id, USER)
    assert record.status == "missed" and record.run_id is None
    assert record.scheduled_for == datetime(2026, 12, 1, 1, 0)
    assert not service.executions


async def test_restart_keeps_schedules_and_next_run_times(tmp_path: Path, llm: ScriptedServer) -> None:
    async def start() -> ScheduleService:
        service = ScheduleService(await AgentRuntime.open(_settings(tmp_path, llm.base_url)))
        await service.start()
        return service

    before = await start()
    daily = await _create(before, cron="0 9 1 1 *")
    paused = await _create(before, name="paused", cron="30 7 * * 1")
    await before.set_enabled(paused.id, USER, False)
    expected = {s.id: before.next_run_at(s) for s in await before.list_for(USER)}
    await before.shutdown()
    await before.runtime.close()

    after = await start()
    try:
        schedules = await after.list_for(USER)
        assert {s.id: after.next_run_at(s) for s in schedules} == expected
        assert expected[paused.id] is None and expected[daily.id] is not None
        job = after._scheduler.get_job("schedule:" + daily.id)
        assert job is not None and job.next_run_time == expected[daily.id], (
            "the job was rebuilt from the table"
        )
        assert after._scheduler.get_job("schedule:" + paused.id) is None
    finally:
        await after.shutdown()
        await after.runtime.close()


async def test_a_job_apscheduler_found_too_late_is_recorded_missed(opened) -> None:  # type: ignore[no-untyped-def]
    """While running, a blocked loop makes APScheduler skip a late job: the tick is still on record."""
    service = opened()
    schedule = await _create(service)
    service._on_missed(
        JobExecutionEvent(EVENT_JOB_MISSED, "schedule:" + schedule.id, "default", BEIJING_0900_UTC)
    )
    await asyncio.gather(*service._background)
    [record] = await service.runs(schedule.id, USER)
    assert record.status == "missed" and record.scheduled_for == BEIJING_0900_UTC.replace(tzinfo=None)
    assert "SCHEDULER_MISFIRE_GRACE_S" in (record.error or "")


async def test_a_schedule_keeps_its_creators_language_for_its_runs_figures(
    opened: Callable[..., ScheduleService],
) -> None:
    """Tester: scheduled runs drew figures in Chinese whatever language the person used."""
    from zoneinfo import ZoneInfo

    from ventapp.scheduler.execution import schedule_request

    service = opened()
    english = await service.create(USER, {"name": "en", "prompt": "p", "cron": "0 9 * * *"}, "en-GB")
    chinese = await service.create(USER, {"name": "zh", "prompt": "p", "cron": "0 9 * * *"}, "zh-CN")
    unset = await service.create(USER, {"name": "none", "prompt": "p", "cron": "0 9 * * *"})
    stored = {s.name: s.lang for s in await service.list_for(USER)}
    assert stored == {"en": "en", "zh": "zh-CN", "none": None}
    tz, tick = ZoneInfo("Asia/Shanghai"), BEIJING_0900_UTC.replace(tzinfo=None)
    assert schedule_request(english, tick, tz).words_lang == "en"
    assert schedule_request(chinese, tick, tz).words_lang == "zh-CN"
    assert schedule_request(unset, tick, tz).words_lang == "zh-CN", "older rows: the spec's default"
    assert schedule_request(english, tick, tz).lang == "en", "the model is asked to answer in it too"
    assert schedule_request(unset, tick, tz).lang == "zh-CN"

    named = await service.create(
        USER, {"name": "n", "prompt": "p", "cron": "0 9 * * *", "lang": "en"}, "zh-CN"
    )
    assert named.lang == "en", "a lang in the fields wins over the creator's language"
    switched = await service.update(chinese.id, USER, {"lang": "en"})
    assert schedule_request(switched, tick, tz).words_lang == "en", "an update moves the runs' language"


async def test_a_scheduled_run_answers_in_its_schedules_language(
    opened: Callable[..., ScheduleService],
) -> None:
    """Tester: "每分钟计算风量", made in the Chinese UI, ran and answered "The result is 60."."""
    service = opened()
    schedule = await service.create(
        USER, {"name": "每分钟计算风量", "prompt": "计算 (12+8)*3", "cron": "* * * * *"}, "zh-CN"
    )
    handoff = await service.run_now(schedule.id, USER)
    await service.executions.wait(handoff.run_id or "")

    messages = chat_store.list_messages(service.runtime.engine, handoff.session_id or "")
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].content == "结果是 60。"
