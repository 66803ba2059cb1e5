"""A schedule fires once per tick across two processes on one PostgreSQL + Redis (issue 14).

Both processes arm the schedule (it is in the table before they start), so both fire every tick:
first the tick missed before start-up (both catch it up at once), then a live one at the next
minute. The database claim (one ``schedule_runs`` row per fire time) must let exactly one of
them run it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.scale.processes import AppProcess, scale_env
from tests.scripted_llm.server import ScriptedServer
from ventapp.db import schedule_store
from ventapp.db.engine import make_engine, upgrade_to_head
from ventapp.db.models import utcnow
from ventapp.db.schedule_models import Schedule

OWNER = "scheduler-owner"
MARKER = f"tick-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def armed(
    llm: ScriptedServer, redis_server: Any, postgres_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[AppProcess]]]:
    """A schedule due every minute, armed two minutes ago; then processes A and B start on its database."""
    database_url = postgres_server.create_database()
    upgrade_to_head(database_url)
    engine = make_engine(database_url)
    armed_at = utcnow() - timedelta(minutes=2)
    schedule = schedule_store.create_schedule(
        engine,
        Schedule(user_name=OWNER, name="every minute", prompt=f"hello {MARKER}", cron="* * * * *",
                 armed_at=armed_at, created_at=armed_at, updated_at=armed_at),
    )  # fmt: skip
    engine.dispose()
    apps = []
    for name in ("a", "b"):
        folder = tmp_path_factory.mktemp(f"sched-{name}")
        env = scale_env(folder / "data", llm.base_url, database_url, redis_server.url)
        apps.append(AppProcess(env, folder / "app.log"))
    try:
        for app in apps:
            app.spawn()
        for app in apps:
            app.wait()
        yield schedule.id, apps
    finally:
        for app in apps:
            app.stop()


def _cron_runs(url: str, schedule_id: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{url}/api/schedules/{schedule_id}/runs", params={"user_name": OWNER}, timeout=10)
    response.raise_for_status()
    return [run for run in response.json()["items"] if run["trigger"] == "cron"]


def test_each_tick_runs_once_although_both_processes_fire_it(
    armed: tuple[str, list[AppProcess]], llm: ScriptedServer
) -> None:
    schedule_id, (a, b) = armed
    for app in (a, b):
        health = httpx.get(f"{app.url}/health", timeout=10).json()
        assert health["subsystems"]["scheduler"]["jobs"] == 1, "both processes fire this schedule"

    runs: list[dict[str, Any]] = []
    deadline = time.monotonic() + 100  # the missed tick at once, the next live one within a minute
    while time.monotonic() < deadline:
        runs = _cron_runs(b.url, schedule_id)
        if len(runs) >= 2 and all(run["status"] not in ("running", "waiting_input") for run in runs):
            break
        time.sleep(1)

    fire_times = [run["scheduled_for"] for run in runs]
    assert len(runs) >= 2, f"a caught-up tick and a live one: {runs}"
    assert len(set(fire_times)) == len(fire_times), "one row per fire time"
    assert all(run["status"] == "success" for run in runs), runs
    prompts = [request for request in llm.requests() if MARKER in str(request["messages"][-1].get("content"))]
    assert len(prompts) == len(runs), "each tick reached the model once, not once per process"
