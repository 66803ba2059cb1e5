"""Preferences and remembered approvals over real HTTP (issue 10: preferences, ``remember``).

Preferences must reach the model's request on every turn (read from the scripted server's
request log); a remembered approval must skip the card for later calls of that tool, in the
session or everywhere, until the rule is revoked.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.sse_client import post_chat, read_frames
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.agent.middleware import PREFERENCES_HEADER
from ventapp.agent.turn_context import PREFERENCES_MAX_CHARS


@pytest.fixture(scope="module")
def prefs_api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    env = {**app_env(tmp_path_factory.mktemp("data"), llm.base_url), "HITL_TOOLS": "calculate"}
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def http(prefs_api: ApiServer, llm: ScriptedServer) -> Iterator[httpx.Client]:
    llm.reset()
    with httpx.Client(base_url=prefs_api.url, timeout=30) as client:
        yield client


def _user() -> str:
    return f"engineer-{uuid.uuid4().hex[:8]}"


def _system_prompts(llm: ScriptedServer) -> list[str]:
    def text(content: Any) -> str:
        if isinstance(content, list):  # a list of text parts, as some clients send it
            return "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return str(content)

    return [text(request["messages"][0]["content"]) for request in llm.requests()]


def _resume(http: httpx.Client, **body: Any) -> tuple[httpx.Response, list[dict[str, Any]]]:
    with http.stream("POST", "/api/chat/resume", json=body) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response, read_frames(response)
        response.read()
        return response, []


def _chat(http: httpx.Client, user: str, message: str, **fields: str) -> tuple[str, list[dict[str, Any]]]:
    response, frames = post_chat(http, message=message, user_name=user, **fields)
    assert response.status_code == 200, response.text
    return response.headers["x-session-id"], frames


def test_preferences_round_trip_and_reach_every_turn(http: httpx.Client, llm: ScriptedServer) -> None:
    user = _user()
    empty = http.get("/api/preferences", params={"user_name": user}).json()
    assert empty["preferences"] == "" and empty["updated_at"] is None

    text = "Answer in Chinese. Give airflow in m³/s and cite 《煤矿安全规程》 articles."
    saved = http.put("/api/preferences", json={"user_name": user, "preferences": text})
    assert saved.status_code == 200 and saved.json()["preferences"] == text and saved.json()["updated_at"]
    assert http.get("/api/preferences", params={"user_name": user}).json()["preferences"] == text
    other = http.get("/api/preferences", params={"user_name": _user()}).json()
    assert other["preferences"] == "", "one user's preferences are theirs alone"

    session_id, frames = _chat(http, user, "please calculate 2*3")
    assert frames[-1]["type"] == "interrupt"
    assert all(f"{PREFERENCES_HEADER}\n{text}" in prompt for prompt in _system_prompts(llm))
    llm.reset()
    _resume(
        http,
        session_id=session_id,
        user_name=user,
        interrupt_token=frames[-1]["interrupt_token"],
        decisions=[{"type": "approve"}],
    )
    assert llm.requests() and all(text in prompt for prompt in _system_prompts(llm)), "resume gets them too"

    assert http.delete("/api/preferences", params={"user_name": user}).status_code == 204
    llm.reset()
    _chat(http, user, "hello again")
    assert llm.requests() and not any(PREFERENCES_HEADER in prompt for prompt in _system_prompts(llm))


def test_preferences_too_long_is_413_and_keeps_the_old_text(http: httpx.Client) -> None:
    user = _user()
    http.put("/api/preferences", json={"user_name": user, "preferences": "metric units"})
    response = http.put(
        "/api/preferences", json={"user_name": user, "preferences": "x" * (PREFERENCES_MAX_CHARS + 1)}
    )
    assert response.status_code == 413 and response.json()["code"] == "too_large"
    assert http.get("/api/preferences", params={"user_name": user}).json()["preferences"] == "metric units"
    assert http.put("/api/preferences", json={"user_name": user}).status_code == 422


def _approve(http: httpx.Client, user: str, session_id: str, frame: dict[str, Any], **decision: Any) -> Any:
    response, frames = _resume(
        http,
        session_id=session_id,
        user_name=user,
        interrupt_token=frame["interrupt_token"],
        decisions=[{"type": "approve", **decision}],
    )
    assert response.status_code == 200, response.text
    return frames


def test_remember_for_the_session_skips_the_next_card_until_revoked(http: httpx.Client) -> None:
    user = _user()
    session_id, frames = _chat(http, user, "please calculate 1+1")
    _approve(http, user, session_id, frames[-1], remember="session")
    (rule,) = http.get("/api/approvals/rules", params={"user_name": user}).json()["items"]
    assert (rule["tool"], rule["scope"], rule["session_id"]) == ("calculate", "session", session_id)

    _, again = _chat(http, user, "please calculate 2+2", session_id=session_id)
    assert again[-1]["type"] == "done", "the remembered tool runs without asking in this session"
    (call,) = [f for f in again if f["type"] == "tool_call"]
    assert call["approved_by_rule"] is True
    stored = http.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()["messages"][-1]
    assert stored["tool_calls"][0]["approved_by_rule"] is True and stored["tool_calls"][0]["content"] == "4"

    _, elsewhere = _chat(http, user, "please calculate 3+3")
    assert elsewhere[-1]["type"] == "interrupt", "a session rule does not reach other sessions"

    assert http.delete(f"/api/approvals/rules/{rule['id']}", params={"user_name": _user()}).status_code == 404
    assert http.delete(f"/api/approvals/rules/{rule['id']}", params={"user_name": user}).status_code == 204
    _, revoked = _chat(http, user, "please calculate 4+4", session_id=session_id)
    assert revoked[-1]["type"] == "interrupt", "after DELETE the tool asks again"


def test_remember_always_covers_every_session_of_that_user_only(http: httpx.Client) -> None:
    user = _user()
    session_id, frames = _chat(http, user, "please calculate 5+5")
    approved = _approve(http, user, session_id, frames[-1], remember="always")
    assert approved[-1]["type"] == "done"
    assert [f["approved_by_rule"] for f in approved if f["type"] == "tool_call"] in ([], [False])

    _, other_session = _chat(http, user, "please calculate 6+6")
    assert other_session[-1]["type"] == "done"
    _, other_user = _chat(http, _user(), "please calculate 7+7")
    assert other_user[-1]["type"] == "interrupt", "rules belong to the user who made them"


def test_remember_with_a_reject_is_422_and_nothing_runs(http: httpx.Client, llm: ScriptedServer) -> None:
    user = _user()
    session_id, frames = _chat(http, user, "please calculate 8+8")
    calls = len(llm.requests())
    response, _ = _resume(
        http,
        session_id=session_id,
        user_name=user,
        interrupt_token=frames[-1]["interrupt_token"],
        decisions=[{"type": "reject", "message": "no", "remember": "always"}],
    )
    refused = response.json()
    assert response.status_code == 422 and refused["code"] == "bad_request"
    assert refused["message"] == "'remember' 只能与 approve 或 edit 决定一起使用，不能与 reject 一起使用。"
    assert refused["detail"] == "'remember' goes with an approve or edit decision, not with a reject."
    assert refused["errors"][0]["loc"] == ["body", "decisions", 0, "remember"]
    assert len(llm.requests()) == calls
    assert http.get("/api/approvals/rules", params={"user_name": user}).json()["items"] == []


def test_remember_inside_a_batch_keeps_the_other_decisions(http: httpx.Client, llm: ScriptedServer) -> None:
    """The framework re-asks its predicate for the paused calls on resume: a new rule must not
    flip them, or the decisions stop lining up with the calls (the reject must still hold)."""
    user = _user()
    llm.push(
        {
            "tool_calls": [
                {"name": "calculate", "arguments": {"expression": "2+2"}},
                {"name": "calculate", "arguments": {"expression": "3+3"}},
            ]
        },
        {"content": "One done, one declined."},
    )
    session_id, frames = _chat(http, user, "two sums")
    response, resumed = _resume(
        http,
        session_id=session_id,
        user_name=user,
        interrupt_token=frames[-1]["interrupt_token"],
        decisions=[{"type": "approve", "remember": "session"}, {"type": "reject", "message": "not this one"}],
    )
    assert response.status_code == 200 and resumed[-1]["type"] == "done"
    tool_messages = sorted(
        str(m["content"]) for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"
    )
    assert tool_messages[0] == "4" and "not this one" in tool_messages[1] and "6" not in tool_messages
