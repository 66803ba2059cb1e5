"""``/api/schedules`` over real HTTP: the eight routes, validation, owners, run now, hand-off, quota."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.api.sse_client import read_frames
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env

ALICE = {"user_name": "alice"}
BOB = {"user_name": "bob"}


@pytest.fixture(scope="module")
def schedules_api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    env = {**app_env(tmp_path_factory.mktemp("data"), llm.base_url), "HITL_TOOLS": "calculate"}
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def http(schedules_api: ApiServer, llm: ScriptedServer) -> Iterator[httpx.Client]:
    llm.reset()
    # The sentences asserted below are English; the default (zh-CN) has a test of its own.
    with httpx.Client(base_url=schedules_api.url, timeout=30, headers={"Accept-Language": "en"}) as client:
        yield client


def _create(http: httpx.Client, user: str = "alice", **fields: Any) -> dict[str, Any]:
    body = {"user_name": user, "name": "Gas report", "prompt": "hello gas", "cron": "0 9 * * *", **fields}
    response = http.post("/api/schedules", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _runs(http: httpx.Client, schedule_id: str, user: str = "alice") -> list[dict[str, Any]]:
    response = http.get(f"/api/schedules/{schedule_id}/runs", params={"user_name": user})
    assert response.status_code == 200, response.text
    return response.json()["items"]


def _until(
    http: httpx.Client, schedule_id: str, done: Callable[[dict[str, Any]], bool], user: str = "alice"
) -> dict[str, Any]:
    """The newest run once ``done`` holds for it (the run goes on in the background)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        runs = _runs(http, schedule_id, user)
        if runs and done(runs[0]):
            return runs[0]
        time.sleep(0.05)
    raise AssertionError(f"the run never got there: {_runs(http, schedule_id, user)}")


def test_create_read_update_pause_resume_delete(http: httpx.Client) -> None:
    created = _create(http, mode="plan")
    assert set(created) >= {
        "id", "user_name", "name", "prompt", "cron", "mode", "enabled", "lang", "timezone",
        "next_run_at", "last_run", "created_at", "updated_at",
    }  # fmt: skip
    assert created["timezone"] == "Asia/Shanghai" and created["mode"] == "plan" and created["enabled"] is True
    assert created["next_run_at"].endswith("T01:00:00.000000Z") and created["last_run"] is None
    sid = created["id"]
    assert [item["id"] for item in http.get("/api/schedules", params=ALICE).json()["items"]] == [sid]

    updated = http.put(f"/api/schedules/{sid}", json={"user_name": "alice", "cron": "30  7 * * 1-5"}).json()
    assert updated["cron"] == "30 7 * * 1-5" and updated["next_run_at"].endswith("T23:30:00.000000Z")
    assert updated["name"] == "Gas report", "PUT takes a subset"
    paused = http.post(f"/api/schedules/{sid}/pause", params=ALICE).json()
    assert paused["enabled"] is False and paused["next_run_at"] is None
    resumed = http.post(f"/api/schedules/{sid}/resume", json=ALICE).json()
    assert resumed["enabled"] is True and resumed["next_run_at"] is not None
    assert http.get(f"/api/schedules/{sid}", params=ALICE).json() == resumed

    assert http.delete(f"/api/schedules/{sid}", params=ALICE).json() == {"deleted": True, "id": sid}
    assert http.get(f"/api/schedules/{sid}", params=ALICE).status_code == 404


@pytest.mark.parametrize(
    ("cron", "field", "cause", "sentence_part"),
    [
        ("61 9 * * *", "minute", "out_of_range", "The minute must be between 0 and 59; 61 is out of range."),
        ("0 9 * *", "cron", "field_count", "this one has 4"),
        ("0 0 30 2 *", "cron", "never_fires", "This expression never fires"),
        ("0 0 31 2 *", "cron", "never_fires", "This expression never fires"),
        ("*/0 * * * *", "minute", "bad_step", "The step in the minute field must be a whole number above 0"),
        ("0 9 * * 9", "day_of_week", "out_of_range", "between 0 and 7"),
    ],
)
def test_a_bad_cron_is_422_with_one_sentence_and_its_cause(
    http: httpx.Client, cron: str, field: str, cause: str, sentence_part: str
) -> None:
    response = http.post("/api/schedules", json={**ALICE, "name": "x", "prompt": "y", "cron": cron})
    body = response.json()
    assert response.status_code == 422 and body["code"] == "bad_cron"
    assert (body["field"], body["cause"]) == (field, cause) and body["reason"]
    assert sentence_part in body["message"] and body["message"] == body["detail"]
    assert body["reason"] not in body["message"], "the parser's detail is not blended into the sentence"
    listed = http.get("/api/schedules", params=ALICE).json()["items"]
    assert all(item["name"] != "x" for item in listed), "nothing was created"


def test_a_bad_cron_points_errors_loc_at_the_cron_field_the_api_takes(http: httpx.Client) -> None:
    """Tester: ``errors[].loc`` was ``["body", "minute"]``, a field the body has not got."""
    response = http.post("/api/schedules", json={**ALICE, "name": "x", "prompt": "y", "cron": "*/0 * * * *"})
    body = response.json()
    assert response.status_code == 422 and body["field"] == "minute", "field still names the cron part"
    assert body["errors"] == [{"type": "bad_cron", "loc": ["body", "cron"], "msg": body["message"]}]


def test_a_never_firing_cron_reason_agrees_with_its_message(http: httpx.Client) -> None:
    """Tester: for ``0 0 31 2 *`` the reason said 30 February and the message 31."""
    body = http.post(
        "/api/schedules", json={**ALICE, "name": "x", "prompt": "y", "cron": "0 0 31 2 *"}
    ).json()
    assert "'31'" in body["reason"] and "day 31" in body["message"]
    assert "30" not in body["reason"] + body["message"]


def test_other_bad_fields_are_422(http: httpx.Client) -> None:
    for body, field in [
        ({"name": "", "prompt": "p", "cron": "0 9 * * *"}, "name"),
        ({"name": "n", "prompt": "p", "cron": "0 9 * * *", "mode": "auto"}, "mode"),
        ({"name": "n", "prompt": "p", "cron": "0 9 * * *", "enabled": "yes"}, "enabled"),
        ({"name": "n", "cron": "0 9 * * *"}, "prompt"),
    ]:
        response = http.post("/api/schedules", json={**ALICE, **body})
        assert response.status_code == 422 and response.json()["field"] == field, response.text


@pytest.mark.parametrize(
    ("accept", "sentence"),
    [
        (
            "en",
            "Schedules run in Beijing time (Asia/Shanghai); a schedule cannot have a time zone of its own.",
        ),
        ("zh-CN", "定时任务一律按北京时间（Asia/Shanghai）运行，不能为单个任务另设时区。"),
    ],
)
def test_a_timezone_other_than_beijing_is_422_saying_schedules_run_in_beijing_time(
    http: httpx.Client, accept: str, sentence: str
) -> None:
    """Tester: ``"timezone": "UTC"`` was 201 with Asia/Shanghai, so the runs came 8 h off."""
    headers = {"Accept-Language": accept}
    before = len(http.get("/api/schedules", params=ALICE).json()["items"])
    body = {**ALICE, "name": "tz", "prompt": "p", "cron": "0 8 * * *", "timezone": "UTC"}
    created = http.post("/api/schedules", json=body, headers=headers)
    refused = created.json()
    assert created.status_code == 422 and (refused["code"], refused["field"]) == ("bad_request", "timezone")
    assert refused["message"].startswith(sentence) and refused["errors"][0]["loc"] == ["body", "timezone"]
    # Tester: the example was "08:00 UTC is 16:00" whatever zone was sent; now it is the zone sent.
    tokyo = http.post("/api/schedules", json={**body, "timezone": "Asia/Tokyo"}, headers=headers).json()
    assert tokyo["detail"].endswith("today 08:00 in Asia/Tokyo is 07:00 in Beijing (0 7 * * *).")
    assert len(http.get("/api/schedules", params=ALICE).json()["items"]) == before, "nothing was created"
    sid = _create(http)["id"]
    put = http.put(f"/api/schedules/{sid}", json={**ALICE, "timezone": "UTC"}, headers=headers)
    assert put.status_code == 422 and put.json()["message"].startswith(sentence), "not 'nothing to change'"
    same = http.put(f"/api/schedules/{sid}", json={**ALICE, "timezone": "Asia/Shanghai", "name": "Beijing"})
    assert same.status_code == 200 and same.json()["name"] == "Beijing", "naming the zone it runs in is fine"


def test_an_unknown_field_is_422_naming_it(http: httpx.Client) -> None:
    """Tester: ``"foo": 1`` was accepted and silently dropped."""
    before = len(http.get("/api/schedules", params=ALICE).json()["items"])
    created = http.post(
        "/api/schedules", json={**ALICE, "name": "n", "prompt": "p", "cron": "0 9 * * *", "foo": 1}
    )
    refused = created.json()
    assert created.status_code == 422 and (refused["code"], refused["field"]) == ("bad_request", "foo")
    assert refused["message"] == (
        "A schedule has no field “foo”: send only name, prompt, cron, mode, enabled, lang."
    )
    assert len(http.get("/api/schedules", params=ALICE).json()["items"]) == before, "nothing was created"
    sid = _create(http)["id"]
    put = http.put(
        f"/api/schedules/{sid}",
        json={**ALICE, "name": "x", "next_run_at": "2030-01-01T00:00:00Z"},
        headers={"Accept-Language": "zh-CN"},
    )
    assert put.status_code == 422 and put.json()["field"] == "next_run_at"
    assert put.json()["message"].startswith("定时任务没有字段“next_run_at”")
    assert http.get(f"/api/schedules/{sid}", params=ALICE).json()["name"] == "Gas report", "nothing changed"


def test_lang_is_returned_defaults_from_accept_language_and_a_put_changes_it(http: httpx.Client) -> None:
    """Tester: ``schedules.lang`` (the language its runs draw figures in) was neither shown nor settable."""
    english = _create(http)  # the client's Accept-Language: en
    assert english["lang"] == "en"
    chinese = http.post(
        "/api/schedules",
        json={**ALICE, "name": "zh", "prompt": "p", "cron": "0 9 * * *"},
        headers={"Accept-Language": "de-DE"},  # neither English nor Chinese: the default
    ).json()
    assert chinese["lang"] == "zh-CN"
    named = _create(http, lang="zh-CN")
    assert named["lang"] == "zh-CN", "the body's lang wins over Accept-Language"
    listed = {item["id"]: item["lang"] for item in http.get("/api/schedules", params=ALICE).json()["items"]}
    assert [listed[english["id"]], listed[chinese["id"]], listed[named["id"]]] == ["en", "zh-CN", "zh-CN"]

    sid = english["id"]
    changed = http.put(f"/api/schedules/{sid}", json={**ALICE, "lang": "zh-CN"})
    assert changed.status_code == 200 and changed.json()["lang"] == "zh-CN", changed.text
    assert changed.json()["name"] == "Gas report" and changed.json()["cron"] == "0 9 * * *", (
        "only lang changed"
    )
    assert http.get(f"/api/schedules/{sid}", params=ALICE).json()["lang"] == "zh-CN"
    assert http.put(f"/api/schedules/{sid}", json={**ALICE, "lang": "en"}).json()["lang"] == "en"


@pytest.mark.parametrize("value", ["fr", "EN", "zh", "", None, 1, ["en"]])
def test_an_unsupported_lang_is_422_naming_the_field(http: httpx.Client, value: object) -> None:
    sid = _create(http)["id"]
    for method, path, body in [
        ("PUT", f"/api/schedules/{sid}", {**ALICE, "lang": value}),
        ("POST", "/api/schedules", {**ALICE, "name": "n", "prompt": "p", "cron": "0 9 * * *", "lang": value}),
    ]:
        response = http.request(method, path, json=body)
        refused = response.json()
        assert response.status_code == 422, (method, response.text)
        assert (refused["code"], refused["field"]) == ("bad_request", "lang")
        assert refused["message"] == "The language (lang) must be one of zh-CN, en." == refused["detail"]
    assert http.get(f"/api/schedules/{sid}", params=ALICE).json()["lang"] == "en", "nothing changed"
    chinese = http.put(
        f"/api/schedules/{sid}", json={**ALICE, "lang": "xx"}, headers={"Accept-Language": "zh-CN"}
    )
    assert chinese.json()["message"] == "语言（lang）只能是 zh-CN, en 之一。"


def test_every_route_needs_user_name_and_hides_other_users_schedules(http: httpx.Client) -> None:
    sid = _create(http)["id"]
    eight = [
        ("GET", "/api/schedules"),
        ("POST", "/api/schedules"),
        ("GET", f"/api/schedules/{sid}"),
        ("PUT", f"/api/schedules/{sid}"),
        ("DELETE", f"/api/schedules/{sid}"),
        ("POST", f"/api/schedules/{sid}/pause"),
        ("POST", f"/api/schedules/{sid}/resume"),
        ("POST", f"/api/schedules/{sid}/run"),
        ("GET", f"/api/schedules/{sid}/runs"),
    ]
    for method, path in eight:
        body = {"name": "n", "prompt": "p", "cron": "0 9 * * *"} if method in ("POST", "PUT") else None
        missing = http.request(method, path, json=body)
        assert missing.status_code == 400 and missing.json()["code"] == "bad_request", (method, path)
        if path == "/api/schedules":
            continue
        foreign = http.request(method, path, params=BOB, json=body)
        assert foreign.status_code == 404 and foreign.json()["code"] == "not_found", (method, path)
    assert http.get("/api/schedules", params=BOB).json()["items"] == []
    assert http.get(f"/api/schedules/{sid}", params=ALICE).json()["enabled"] is True, "bob changed nothing"
    assert _runs(http, sid) == [], "bob's run was never started"
    clash = http.post(f"/api/schedules/{sid}/pause", params=ALICE, json=BOB)
    assert clash.status_code == 400


@pytest.mark.parametrize(
    ("accept", "required", "not_object", "bad_cron"),
    [
        (None, "缺少 user_name", "请求体必须是一个 JSON 对象。", "分钟"),
        ("en-GB", "user_name is required", "The body must be a JSON object.", "The minute must be"),
    ],
)
def test_schedule_refusals_follow_the_accept_language(
    http: httpx.Client, accept: str | None, required: str, not_object: str, bad_cron: str
) -> None:
    """Tester: the refusals only the API gives (no owner, a body that is no object) were English.

    ``detail`` (and ``errors[].msg``) stay the English sentence, as for every other refusal (tester:
    schedules translated ``detail`` too)."""
    headers = {"Accept-Language": accept or "de-DE"}  # neither English nor Chinese: the default, zh-CN
    missing = http.get("/api/schedules", headers=headers)
    assert missing.status_code == 400 and missing.json()["code"] == "bad_request"
    assert missing.json()["message"].startswith(required)
    assert missing.json()["detail"].startswith("user_name is required")
    bad_body = http.post("/api/schedules", params=ALICE, content=b"[1, 2]", headers=headers)
    assert bad_body.status_code == 422 and bad_body.json()["message"] == not_object
    assert bad_body.json()["detail"] == "The body must be a JSON object."
    assert bad_body.json()["errors"][0]["msg"] == "The body must be a JSON object."
    cron = http.post(
        "/api/schedules", json={**ALICE, "name": "x", "prompt": "y", "cron": "61 9 * * *"}, headers=headers
    )
    assert cron.json()["code"] == "bad_cron" and cron.json()["cause"] == "out_of_range", "the codes stay"
    assert bad_cron in cron.json()["message"]
    english = "The minute must be between 0 and 59; 61 is out of range."
    assert (
        cron.json()["detail"].startswith(english) and cron.json()["errors"][0]["msg"] == cron.json()["detail"]
    )


def test_run_now_streams_through_the_pipeline_and_is_billed(http: httpx.Client, llm: ScriptedServer) -> None:
    sid = _create(http, name="Morning gas")["id"]
    started = http.post(f"/api/schedules/{sid}/run", params=ALICE)
    assert started.status_code == 202
    run_id, session_id = started.json()["run_id"], started.json()["session_id"]
    run = _until(http, sid, lambda r: r["status"] != "running")
    assert run["status"] == "success" and run["trigger"] == "manual"
    assert (run["run_id"], run["session_id"]) == (run_id, session_id)
    assert run["scheduled_for"].endswith("Z") and run["usage"]["total_tokens"] > 0
    # The run's status is saved before its last call is settled: the ledger follows within moments.
    deadline = time.monotonic() + 10
    while (response := http.get(f"/api/usage/runs/{run_id}", params=ALICE)).status_code == 404 or len(
        response.json()["items"]
    ) < len(llm.requests()):
        assert time.monotonic() < deadline, response.text
        time.sleep(0.05)
    ledger = response.json()["items"]
    assert (
        len(ledger) == len(llm.requests())
        and sum(r["input_tokens"] for r in ledger) == run["usage"]["input_tokens"]
    )
    history = http.get(f"/api/chat/history/{session_id}", params=ALICE).json()["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"] and "hello gas" in history[-1]["content"]
    session_runs = http.get(f"/api/sessions/{session_id}/runs", params=ALICE).json()["runs"]
    assert [(r["run_id"], r["kind"]) for r in session_runs] == [(run_id, "schedule")]
    titles = {s["id"]: s["title"] for s in http.get("/api/sessions", params=ALICE).json()["sessions"]}
    assert titles[session_id].startswith("Morning gas · ")
    listed = http.get(f"/api/schedules/{sid}", params=ALICE).json()
    assert listed["last_run"]["run_id"] == run_id and listed["last_run"]["status"] == "success"


def test_an_approval_hands_off_to_the_chat_and_the_final_status_comes_back(http: httpx.Client) -> None:
    sid = _create(http, user="carol", name="Fan check", prompt="please calculate (2+3)*4")["id"]
    started = http.post(f"/api/schedules/{sid}/run", json={"user_name": "carol"}).json()
    run = _until(http, sid, lambda r: r["status"] != "running", user="carol")
    assert run["status"] == "waiting_input" and run["finished_at"] is not None

    pending = http.get(
        "/api/chat/interrupt", params={"session_id": started["session_id"], "user_name": "carol"}
    )
    assert pending.status_code == 200 and pending.json()["kind"] == "tool_approval"
    body = {
        "session_id": started["session_id"],
        "user_name": "carol",
        "interrupt_token": pending.json()["interrupt_token"],
        "decisions": [{"type": "approve"}],
    }
    with http.stream("POST", "/api/chat/resume", json=body) as response:
        frames = read_frames(response)
    assert frames[-1]["type"] == "done"
    final = _runs(http, sid, user="carol")[0]
    assert final["status"] == "success" and final["run_id"] == started["run_id"], "synced from the chat"


def test_a_run_refused_by_the_quota_is_recorded_with_the_reason(http: httpx.Client) -> None:
    user = {"user_name": "dave"}
    sid = _create(http, user="dave")["id"]
    assert http.post(f"/api/schedules/{sid}/run", params=user).status_code == 202
    _until(http, sid, lambda r: r["status"] == "success", user="dave")
    assert http.put("/api/usage/quota", params=user, json={"daily_token_limit": 1}).status_code == 200

    refused = http.post(f"/api/schedules/{sid}/run", params=user)
    assert refused.status_code == 429 and refused.json()["code"] == "quota"
    newest = _runs(http, sid, user="dave")[0]
    assert newest["status"] == "rejected" and newest["error_code"] == "quota" and newest["run_id"] is None
    assert newest["error"] == refused.json()["message"]
    chinese = http.post(f"/api/schedules/{sid}/run", params=user, headers={"Accept-Language": "zh-CN"}).json()
    assert chinese["code"] == "quota" and chinese["message"].startswith("你今天已用 "), (
        "worded like /api/chat's"
    )
    assert chinese["detail"] == refused.json()["detail"] == refused.json()["message"], "detail stays English"
    runs = http.get(f"/api/schedules/{sid}/runs", params=user, headers={"Accept-Language": "zh-CN"})
    newest = runs.json()["items"][0]
    assert newest["error_detail"] == chinese["detail"], "the stored English sentence"
    assert "额度" in newest["error"] and newest["error_code"] == "quota", "worded by the reader's language"
    listed = http.get("/api/schedules", params=user, headers={"Accept-Language": "zh-CN"}).json()["items"]
    assert listed[0]["last_run"]["error"] == newest["error"]
