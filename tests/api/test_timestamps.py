"""Every timestamp the API writes is ISO 8601 in UTC with ``Z`` and microseconds, on every route.

Before, the history and the usage ledger sent naive times (a browser reads them as local
time), schedules sent Beijing times with ``+08:00``, and the rest sent ``Z`` with or without
microseconds (text order then differs from time order: ``…:03Z`` sorts after ``…:03.5Z``).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx

from tests.api.sse_client import read_frames
from ventapp.db.models import iso_utc

LOOKS_LIKE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
UTC_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


def _timestamps(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(json path, text)`` of every string in ``value`` that reads as a date and time."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _timestamps(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _timestamps(item, f"{path}[{index}]")
    elif isinstance(value, str) and LOOKS_LIKE_TIME.match(value):
        yield path, value


def test_iso_utc_writes_one_format_whatever_it_is_given() -> None:
    naive = datetime(2026, 12, 1, 9, 50, 25)
    beijing = datetime(2026, 12, 1, 17, 50, 25, tzinfo=timezone(timedelta(hours=8)))
    assert iso_utc(naive) == iso_utc(beijing) == "2026-12-01T09:50:25.000000Z"
    assert iso_utc(datetime(2026, 12, 1, 9, 50, 25, 5, tzinfo=UTC)) == "2026-12-01T09:50:25.000005Z"
    assert iso_utc(None) is None


def _chat_with_a_file(client: httpx.Client, user: str) -> tuple[str, str]:
    files = {
        "message": (None, "please calculate (12+8)*3"),
        "user_name": (None, user),
        "file": ("readings.csv", b"station,ch4\nA,0.4\n", "text/csv"),
    }
    with client.stream("POST", "/api/chat", files=files) as response:
        assert response.status_code == 200
        read_frames(response)
        return response.headers["x-session-id"], response.headers["x-run-id"]


def _schedule_run(client: httpx.Client, user: str) -> str:
    body = {"user_name": user, "name": "Gas", "prompt": "please calculate 1+1", "cron": "0 9 * * *"}
    schedule_id = client.post("/api/schedules", json=body).json()["id"]
    assert client.post(f"/api/schedules/{schedule_id}/run", params={"user_name": user}).status_code == 202
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        runs = client.get(f"/api/schedules/{schedule_id}/runs", params={"user_name": user}).json()["items"]
        if runs and runs[0]["finished_at"]:
            return schedule_id
        time.sleep(0.1)
    raise AssertionError("the scheduled run did not finish")


def test_every_route_writes_utc_with_z(client: httpx.Client) -> None:
    user = f"ts-{uuid.uuid4().hex[:8]}"
    me = {"user_name": user}
    session_id, run_id = _chat_with_a_file(client, user)
    assert client.put("/api/preferences", json={**me, "preferences": "SI units"}).status_code == 200
    schedule_id = _schedule_run(client, user)

    routes = [
        f"/api/chat/history/{session_id}",
        "/api/sessions",
        f"/api/sessions/{session_id}/runs",
        f"/api/sessions/{session_id}/context",
        f"/api/sessions/{session_id}/workspace",
        "/api/usage/today",
        "/api/usage/recent",
        f"/api/usage/runs/{run_id}",
        "/api/health/billing",
        "/api/preferences",
        "/api/approvals/rules",
        "/api/model",
        "/api/schedules",
        f"/api/schedules/{schedule_id}",
        f"/api/schedules/{schedule_id}/runs",
        "/health",
    ]
    seen: dict[str, str] = {}
    for route in routes:
        response = client.get(route, params=me)
        assert response.status_code == 200, (route, response.text)
        for path, text in _timestamps(response.json()):
            seen[f"{route}{path}"] = text
    wrong = {path: text for path, text in seen.items() if not UTC_Z.match(text)}
    assert wrong == {}, wrong
    # The walk really met the timestamps the defect was about.
    for expected in (
        f"/api/chat/history/{session_id}.messages[0].created_at",
        "/api/usage/recent.items[0].created_at",
        "/api/usage/today.resets_at",
        "/api/schedules.items[0].next_run_at",
        f"/api/schedules/{schedule_id}/runs.items[0].scheduled_for",
        "/api/preferences.updated_at",
        "/api/model.agent.built_at",
        "/api/sessions.sessions[0].updated_at",
        f"/api/sessions/{session_id}/runs.runs[0].started_at",
    ):
        assert expected in seen, "\n".join(sorted(seen))
    assert any(path.endswith(".modified") for path in seen), sorted(seen)
