"""Approvals inside a sub-agent, over real HTTP: shown like main-agent ones, billed once (issue 17, 6 and 8).

The researcher sub-agent calls ``knowledge_search``, which ``HITL_TOOLS`` puts behind an
approval; the pause surfaces from the sub-agent's namespace. What must hold: the interrupt
frame and ``GET /api/chat/interrupt`` name the paused call's id; after the resume the call's
card belongs to the sub-agent (not ``main``) and shows the arguments that ran; and the
whole answer's usage (``done``, the stored message, the run record) equals the ledger —
the paused sub-agent call is not counted a second time.
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
from ventapp.i18n import t


@pytest.fixture(scope="module")
def sub_api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    env = {**app_env(tmp_path_factory.mktemp("data"), llm.base_url), "HITL_TOOLS": "knowledge_search"}
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def http(sub_api: ApiServer, llm: ScriptedServer) -> Iterator[httpx.Client]:
    llm.reset()
    with httpx.Client(base_url=sub_api.url, timeout=30) as client:
        yield client


def _task(call_id: str) -> dict[str, Any]:
    arguments = {"description": "find the velocity limits", "subagent_type": "researcher"}
    return {"id": call_id, "name": "task", "arguments": arguments}


def _search(call_id: str, query: str) -> dict[str, Any]:
    return {"id": call_id, "name": "knowledge_search", "arguments": {"query": query}}


def _resume(http: httpx.Client, **body: Any) -> list[dict[str, Any]]:
    with http.stream("POST", "/api/chat/resume", json=body) as response:
        assert response.status_code == 200, response.read()
        return read_frames(response)


def _paused(http: httpx.Client, user: str) -> tuple[str, dict[str, Any]]:
    response, frames = post_chat(http, message="what are the air velocity limits?", user_name=user)
    assert response.status_code == 200 and frames[-1]["type"] == "interrupt", [f["type"] for f in frames]
    return response.headers["x-session-id"], frames[-1]


def _ledger(http: httpx.Client, run_id: str, user: str) -> list[dict[str, Any]]:
    return http.get(f"/api/usage/runs/{run_id}", params={"user_name": user}).json()["items"]


def _assert_usage_equals_ledger(http: httpx.Client, session_id: str, done: dict[str, Any], user: str) -> None:
    rows = _ledger(http, done["run_id"], user)
    booked = {
        "model_calls": len(rows),
        "input_tokens": sum(row["input_tokens"] for row in rows),
        "output_tokens": sum(row["output_tokens"] for row in rows),
    }
    live = {key: done["usage"][key] for key in booked}
    assert live == booked, "done.usage counts every model call once, like the ledger"
    saved = http.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()["messages"][-1]
    assert {key: saved["usage"][key] for key in booked} == booked, "the stored answer equals the ledger"
    (run,) = [
        r for r in http.get(f"/api/sessions/{session_id}/runs", params={"user_name": user}).json()["runs"]
    ]
    assert (run["input_tokens"], run["output_tokens"]) == (booked["input_tokens"], booked["output_tokens"])


def test_rejected_sub_agent_call_is_named_billed_once_and_kept_with_its_agent(
    http: httpx.Client, llm: ScriptedServer
) -> None:
    user = f"sub-{uuid.uuid4().hex[:8]}"
    llm.push({"tool_calls": [_task("task_1")]}, {"tool_calls": [_search("kb_1", "velocity limits")]})
    session_id, frame = _paused(http, user)

    assert frame["kind"] == "tool_approval" and frame["tool_approval"]["tool"] == "knowledge_search"
    assert frame["tool_call_ids"] == ["kb_1"], "the paused sub-agent call is named like a main-agent one"
    routed = http.get("/api/chat/interrupt", params={"session_id": session_id, "user_name": user}).json()
    assert routed["tool_call_ids"] == ["kb_1"], "the route after a reload names it too"

    llm.push({"content": "The search was declined."}, {"content": "I could not search the handbook."})
    frames = _resume(
        http,
        session_id=session_id,
        user_name=user,
        interrupt_token=frame["interrupt_token"],
        decisions=[{"type": "reject", "message": "not now"}],
    )
    assert frames[-1]["type"] == "done"
    assert len(llm.requests()) == 4, "task, paused search, sub-agent answer, main answer"
    _assert_usage_equals_ledger(http, session_id, frames[-1], user)
    assert frames[-1]["usage"]["model_calls"] == 4

    cards = {
        card["tool_call_id"]: card
        for card in http.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()[
            "messages"
        ][-1]["tool_calls"]
    }
    assert cards["kb_1"]["agent_id"] == "task_1", "the sub-agent's call stays the sub-agent's after resume"
    result = next(f for f in frames if f["type"] == "tool_result" and f["tool_call_id"] == "kb_1")
    assert result["agent_id"] == "task_1" and "not now" in result["content"]


def test_edited_sub_agent_call_shows_the_arguments_that_ran(http: httpx.Client, llm: ScriptedServer) -> None:
    user = f"sub-{uuid.uuid4().hex[:8]}"
    llm.push({"tool_calls": [_task("task_2")]}, {"tool_calls": [_search("kb_2", "velocity")]})
    session_id, frame = _paused(http, user)
    assert frame["tool_call_ids"] == ["kb_2"]

    llm.push({"content": "Found the limits."}, {"content": "The limits are in the handbook."})
    frames = _resume(
        http,
        session_id=session_id,
        user_name=user,
        interrupt_token=frame["interrupt_token"],
        decisions=[{"type": "edit", "args": {"query": "air velocity limits roadway"}}],
    )
    assert frames[-1]["type"] == "done"
    calls = [f for f in frames if f["type"] == "tool_call" and f["tool_call_id"] == "kb_2"]
    assert calls and calls[-1]["args"] == {"query": "air velocity limits roadway"}
    assert calls[-1]["agent_id"] == "task_2"
    _assert_usage_equals_ledger(http, session_id, frames[-1], user)

    saved = {
        card["tool_call_id"]: card
        for card in http.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()[
            "messages"
        ][-1]["tool_calls"]
    }
    assert saved["kb_2"]["args"] == {"query": "air velocity limits roadway"}
    assert saved["kb_2"]["agent_id"] == "task_2" and saved["kb_2"]["content"]


@pytest.mark.parametrize("subagent", ["researcher", "general-purpose"])
@pytest.mark.parametrize("reason", ["现在不要检索手册。", ""])
def test_a_sub_agents_model_reads_a_rejection_as_one_without_the_english_wrapper(
    http: httpx.Client, llm: ScriptedServer, subagent: str, reason: str
) -> None:
    """Sub-agents had langchain's stock approval middleware: their model read "User rejected the tool
    call for `knowledge_search` with reason: …" in English around a Chinese reviewer's reason."""
    user = f"sub-{uuid.uuid4().hex[:8]}"
    call_id = f"kb-{uuid.uuid4().hex[:6]}"
    task = {**_task("task_r"), "arguments": {"description": "find the limits", "subagent_type": subagent}}
    llm.push({"tool_calls": [task]}, {"tool_calls": [_search(call_id, "velocity limits")]})
    session_id, frame = _paused(http, user)
    assert frame["tool_call_ids"] == [call_id]

    llm.push({"content": "The search was declined."}, {"content": "I could not search the handbook."})
    decision = {"type": "reject", **({"message": reason} if reason else {})}
    frames = _resume(
        http,
        session_id=session_id,
        user_name=user,
        interrupt_token=frame["interrupt_token"],
        decisions=[decision],
    )
    assert frames[-1]["type"] == "done"
    sub_request = llm.requests()[2]  # task, paused search, then the sub-agent's model after the rejection
    (rejected,) = [m for m in sub_request["messages"] if m.get("tool_call_id") == call_id]
    # The API's sentence in zh-CN here: rejected, then the reason (or that none was given).
    expected = (
        f"用户拒绝了这次操作，理由：{reason}" if reason else t("approval.reject_default_reason", "zh-CN")
    )
    assert rejected["content"] == expected, "says it was rejected, no English wrapper"
