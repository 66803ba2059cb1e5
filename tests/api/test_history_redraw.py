"""``GET /api/chat/history`` holds what a client needs to redraw a session as it streamed, and
``done`` lists the answer's workspace files as the history does (the legacy test page's reload)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.sse_client import post_chat, read_frames
from tests.scripted_llm.server import ScriptedServer

EN = {"Accept-Language": "en"}


def _history(client: httpx.Client, session_id: str, user: str, **headers: str) -> dict[str, Any]:
    response = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _frame(frames: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(frame for frame in frames if frame["type"] == kind)


def test_history_names_each_tool_and_the_agent_in_the_request_language(client: httpx.Client) -> None:
    """Tester: after a reload the legacy page titled a card "calculate"; live, "Calculator (calculate)"
    (the interrupt frame's ``label``): the history had no display name to title it with."""
    response, frames = post_chat(client, message="please calculate (12+8)*3", user_name="labeller")
    session_id = response.headers["x-session-id"]
    english = _history(client, session_id, "labeller", **EN)
    chinese = _history(client, session_id, "labeller")
    (call,) = english["messages"][-1]["tool_calls"]
    assert call["label"] == "Calculator" and chinese["messages"][-1]["tool_calls"][0]["label"] == "计算器"
    stored = {key: value for key, value in call.items() if key != "label"}
    assert stored["tool"] == "calculate" and stored["cn_tool"] == "计算器" and stored["content"] == "60"
    assert stored["tool_call_id"] == _frame(frames, "tool_call")["tool_call_id"], "existing keys unchanged"
    # What the stream's agent_done said the agent is (its ``label``), per language.
    assert english["agent_label"] == "Ventilation agent" and chinese["agent_label"] == "通风智能体"


def test_history_says_model_only_as_the_citations_frame_did(client: httpx.Client) -> None:
    """Tester: "Sources (model only)" was gone after a reload: the history did not say it."""
    response, calculated = post_chat(client, message="please calculate 2+2", user_name="sourcer")
    session_id = response.headers["x-session-id"]
    _, searched = post_chat(client, message="search fan laws", user_name="sourcer", session_id=session_id)
    rows = _history(client, session_id, "sourcer")["messages"]
    assert [row["model_only"] for row in rows] == [
        False,
        _frame(calculated, "citations")["model_only"],
        False,
        _frame(searched, "citations")["model_only"],
    ]
    assert rows[1]["model_only"] is True and rows[3]["model_only"] is False and rows[3]["citations"]


def test_history_gives_a_failed_answer_the_error_frame_that_closed_it(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    """After a reload the page read "this answer did not finish [failed]" for the stream's own error."""
    for headers in (EN, {}):
        llm.push({"error": 500, "message": "boom"})
        with client.stream(
            "POST",
            "/api/chat",
            files={"message": (None, "this fails"), "user_name": (None, "failer")},
            headers=headers,
        ) as response:
            closing = read_frames(response)[-1]
        assert closing["type"] == "error"
        history = _history(client, response.headers["x-session-id"], "failer", **headers)
        question, answer = history["messages"]
        assert answer["error"] == {"message": closing["message"], "code": closing["code"]}
        assert question["error"] is None
    ok, _ = post_chat(client, message="hello", user_name="failer")
    assert _history(client, ok.headers["x-session-id"], "failer")["messages"][-1]["error"] is None


def test_done_lists_the_workspace_links_the_history_lists(client: httpx.Client, llm: ScriptedServer) -> None:
    """``done`` lacked the ``workspace_links`` a re-read gives; now the same list, additively."""
    llm.push({"content": "See ![net](/workspace/uploads/fans.csv) and [fans](/workspace/uploads/fans.csv)."})
    with client.stream(
        "POST",
        "/api/chat",
        files={
            "message": (None, "show my data"),
            "user_name": (None, "linker"),
            "file": ("fans.csv", b"fan,kW\nA,30\n", "text/csv"),
        },
    ) as response:
        done = read_frames(response)[-1]
    session_id = response.headers["x-session-id"]
    assert done["type"] == "done" and {"duration_ms", "usage", "run_id"} <= set(done)
    answer = _history(client, session_id, "linker")["messages"][-1]
    assert (
        done["workspace_links"]
        == answer["workspace_links"]
        == [
            {
                "path": "/workspace/uploads/fans.csv",
                "url": f"/api/sessions/{session_id}/files?path=/workspace/uploads/fans.csv",
            }
        ]
    )
    _, plain = post_chat(client, message="hello", user_name="linker", session_id=session_id)
    assert plain[-1]["type"] == "done" and plain[-1]["workspace_links"] == []
