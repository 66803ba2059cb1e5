"""Model control over real HTTP (issue 10): ``/api/model``, ``/api/model/tools``, thinking switch,
reload, and named model routes (``MODELS``, ``/api/chat``'s ``model`` field).

Two scripted servers stand for two endpoints: the main route (``THINKING_CONTROL=effort``, so a
level is sent as ``reasoning_effort``) and the ``second`` route. What reached which server, and
with which parameters, is read from their request logs.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.sse_client import post_chat
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env


@pytest.fixture(scope="module")
def second() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def model_api(
    llm: ScriptedServer, second: ScriptedServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiServer]:
    routes = [
        {
            "name": "second",
            "model": "scripted-demo",
            "base_url": second.base_url,
            "api_key": "sk-secret-second",
        },
        {"name": "unpriced", "model": "nobody-priced-this", "base_url": second.base_url, "api_key": "x"},
    ]
    env = {
        **app_env(tmp_path_factory.mktemp("data"), llm.base_url),
        "THINKING_CONTROL": "effort",
        "MODELS": json.dumps(routes),
        "CONTEXT_LIMIT": "64000",
        "AUTH_NONE_OPERATORS": "default, ops",  # the operator routes are refused to anyone else
    }
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def http(model_api: ApiServer, llm: ScriptedServer, second: ScriptedServer) -> Iterator[httpx.Client]:
    llm.reset()
    second.reset()
    llm._state.delay_ms = 0
    with httpx.Client(base_url=model_api.url, timeout=30) as client:
        yield client
        client.post("/api/model/thinking", json={"level": "default"}, params={"user_name": "ops"})


def _user() -> str:
    return f"engineer-{uuid.uuid4().hex[:8]}"


def test_model_summary_names_route_window_levels_and_assembly(http: httpx.Client) -> None:
    body = http.get("/api/model", params={"user_name": _user()}).json()
    assert body["name"] == "default" and body["provider"] == "local" and body["model"] == "scripted-demo"
    assert body["base_url"].endswith("/v1") and "scripted" not in json.dumps(body["routes"]).replace(
        "scripted-demo", ""
    )
    assert "sk-secret-second" not in json.dumps(body), "a key must never be shown"
    assert body["context_limit"] == 64000 and body["context_source"] == "CONTEXT_LIMIT"
    assert body["thinking"] == {
        "control": "effort",
        "level": "default",
        "levels": ["default", "off", "low", "medium", "high"],
    }
    assert [route["name"] for route in body["routes"]] == ["default", "second", "unpriced"]
    assert {route["name"]: route["priced"] for route in body["routes"]} == {
        "default": True,
        "second": True,
        "unpriced": False,
    }
    agent = body["agent"]
    assert "calculate" in agent["tools"] and "task" in agent["tools"]
    assert agent["subagents"] == ["general-purpose", "researcher"]
    assert "ventilation-network-analysis" in agent["skills"]
    middleware = agent["middleware"]
    assert middleware.index("PreferencesMiddleware") < middleware.index("DynamicTimeMiddleware")
    assert middleware.index("SummarizationMiddleware") < middleware.index("SkillsMiddleware")
    assert body["turn"]["preferences"] is False


def test_model_summary_says_whether_preferences_are_given(http: httpx.Client) -> None:
    user = _user()
    http.put("/api/preferences", json={"user_name": user, "preferences": "Answer in Chinese."})
    turn = http.get("/api/model", params={"user_name": user}).json()["turn"]
    assert turn["preferences"] is True and turn["preferences_chars"] == len("Answer in Chinese.")


def test_unknown_route_is_400_listing_the_names(http: httpx.Client) -> None:
    for response in (
        http.get("/api/model", params={"model": "nope"}),
        http.get("/api/model/tools", params={"model": "nope"}),
        http.post("/api/model/thinking", json={"level": "high", "model": "nope"}),
    ):
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "unknown_model"
        assert response.json()["models"] == ["default", "second", "unpriced"]


def test_tools_by_group_with_labels_and_approval(http: httpx.Client) -> None:
    body = http.get("/api/model/tools", params={"user_name": _user()}).json()
    assert body["route"] == "default"
    tools = {tool["name"]: (group["group"], tool) for group in body["groups"] for tool in group["tools"]}
    group, calculate = tools["calculate"]
    assert group == "计算"
    assert calculate["label"] == "计算器" and calculate["summary"] and calculate["requires_approval"] is False
    assert tools["task"][0] == "框架" and tools["task"][1]["label"] == "子智能体"
    assert all(
        set(tool) == {"name", "label", "summary", "requires_approval", "rememberable"}
        for _, tool in tools.values()
    )


def test_thinking_switch_reaches_the_request_and_unknown_levels_are_422(
    http: httpx.Client, llm: ScriptedServer
) -> None:
    refused = http.post("/api/model/thinking", json={"level": "ultra"})
    assert refused.status_code == 422 and refused.json()["code"] == "unknown_level"
    assert refused.json()["levels"] == ["default", "off", "low", "medium", "high"]
    # ``message`` in Accept-Language (default Chinese), ``detail`` the English sentence.
    assert refused.json()["detail"].startswith(
        "The model route 'default' offers the thinking levels default,"
    )
    assert refused.json()["detail"].endswith("got 'ultra'.")
    assert "思考级别" in refused.json()["message"] and "'ultra'" in refused.json()["message"]

    switched = http.post("/api/model/thinking", json={"level": "High"}, params={"user_name": "ops"})
    assert switched.status_code == 200, switched.text
    assert switched.json()["level"] == "high" and switched.json()["model"] == "scripted-demo"
    _, frames = post_chat(http, message="hello", user_name=_user())
    assert llm.requests()[-1]["reasoning_effort"] == "high"
    assert any(frame["type"] == "thinking_token" for frame in frames)  # the scripted model thinks when asked
    assert http.get("/api/model").json()["thinking"]["level"] == "high"

    http.post("/api/model/thinking", json={"level": "off"})
    post_chat(http, message="hello", user_name=_user())
    assert llm.requests()[-1]["reasoning_effort"] == "none"
    http.post("/api/model/thinking", json={"level": "default"})
    post_chat(http, message="hello", user_name=_user())
    assert "reasoning_effort" not in llm.requests()[-1]


def _chat_in_background(url: str, **fields: str) -> tuple[threading.Thread, dict[str, Any]]:
    result: dict[str, Any] = {}

    def run() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            result["response"], result["frames"] = post_chat(client, **fields)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def _wait_for_requests(llm: ScriptedServer, count: int) -> None:
    deadline = time.monotonic() + 20
    while len(llm.requests()) < count:
        assert time.monotonic() < deadline, "the run never reached the model"
        time.sleep(0.02)


@pytest.mark.parametrize("action", ["thinking", "reload"])
def test_a_run_in_flight_keeps_its_agent_and_the_next_gets_the_new(
    http: httpx.Client, llm: ScriptedServer, model_api: ApiServer, action: str
) -> None:
    """The in-flight run's second model call (after its tool) still goes out without the new level."""
    llm._state.delay_ms = 60  # a tool call then an answer: long enough to switch in between
    user = _user()
    thread, result = _chat_in_background(model_api.url, message="please calculate 6*7", user_name=user)
    _wait_for_requests(llm, 1)
    before = http.get("/api/model").json()["agent"]["generation"]
    if action == "thinking":
        assert http.post("/api/model/thinking", json={"level": "low"}).status_code == 200
    else:
        reloaded = http.post("/api/model/reload", params={"user_name": "ops"})
        assert reloaded.status_code == 200, reloaded.text
        assert reloaded.json()["generation"] == before + 1 and "calculate" in reloaded.json()["tools"]
        # Tester: "routes" left out the unpriced route (never built: its runs are refused with 503).
        assert reloaded.json()["routes"] == ["default", "second", "unpriced"]
        assert "default" in reloaded.json()["rebuilt"] and "unpriced" not in reloaded.json()["rebuilt"]
        http.post("/api/model/thinking", json={"level": "low"})  # the reloaded agent is the one switched
    thread.join(60)
    frames = result["frames"]
    assert frames[-1]["type"] == "done", frames[-1]
    assert "42" in "".join(frame["content"] for frame in frames if frame["type"] == "token")
    in_flight = llm.requests()
    assert len(in_flight) == 2 and all("reasoning_effort" not in request for request in in_flight)
    llm._state.delay_ms = 0
    post_chat(http, message="hello", user_name=user)
    assert llm.requests()[-1]["reasoning_effort"] == "low"
    if action == "reload":
        assert http.get("/api/model").json()["agent"]["generation"] == before + 1


def test_chat_on_a_named_route_and_the_session_keeps_it(
    http: httpx.Client, llm: ScriptedServer, second: ScriptedServer
) -> None:
    user = _user()
    response, frames = post_chat(http, message="hello there", user_name=user, model="second")
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    assert len(second.requests()) == 1 and llm.requests() == []
    session_id = response.headers["x-session-id"]
    post_chat(http, message="and again", user_name=user, session_id=session_id)
    assert len(second.requests()) == 2 and llm.requests() == [], "the session keeps its route"
    post_chat(http, message="back to main", user_name=user, session_id=session_id, model="default")
    assert len(llm.requests()) == 1


def test_chat_with_an_unknown_or_unpriced_route_is_refused(
    http: httpx.Client, second: ScriptedServer
) -> None:
    unknown = post_chat(http, message="hello", user_name=_user(), model="nope")[0]
    assert unknown.status_code == 400 and unknown.json()["code"] == "unknown_model"
    assert unknown.json()["models"] == ["default", "second", "unpriced"]
    unpriced = post_chat(http, message="hello", user_name=_user(), model="unpriced")[0]
    assert unpriced.status_code == 503 and unpriced.json()["code"] == "model_unpriced"
    assert "nobody-priced-this" in unpriced.json()["message"] and second.requests() == []


def test_operator_actions_resolve_the_caller_like_every_route(http: httpx.Client) -> None:
    for response in (
        http.post("/api/model/thinking", json={"level": "high"}, params={"user_name": "  "}),
        http.post("/api/model/reload", params={"user_name": "a\u200bb"}),
    ):
        assert response.status_code == 400 and response.json()["code"] == "bad_request"
    assert http.get("/api/model").json()["thinking"]["level"] == "default"


def test_operator_actions_are_refused_to_names_not_listed_in_auth_none_operators(http: httpx.Client) -> None:
    for response in (
        http.post("/api/model/thinking", json={"level": "high"}, params={"user_name": "mallory"}),
        http.post("/api/model/reload", params={"user_name": "mallory"}),
    ):
        assert response.status_code == 403 and response.json()["code"] == "operator_only"
        assert "AUTH_NONE_OPERATORS" in response.json()["message"]
    assert http.get("/api/model").json()["thinking"]["level"] == "default"
