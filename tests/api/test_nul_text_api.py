"""NUL and invisible characters over real HTTP, on every engine (tester try19).

Typed text is refused with the usual JSON refusal; machine-made text (the model's answer, a
tool's result) holding NUL is stored as U+FFFD, so a PostgreSQL turn ends ``success`` instead
of parking its answer in the spool for ever.
"""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.api.sse_client import post_chat, read_frames
from tests.scripted_llm.server import ScriptedServer

# Runs on SQLite, PostgreSQL and MariaDB (tests/conftest.py `engines`).
pytestmark = pytest.mark.engines


def _user() -> str:
    return f"nul-{uuid.uuid4().hex[:8]}"


def _refused(response: httpx.Response, status: int = 400) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["code"] == "bad_request"
    return body


def test_nul_in_a_chat_message_is_a_worded_400(client: httpx.Client) -> None:
    response, frames = post_chat(client, message="hello\x00world", user_name=_user())
    body = _refused(response)
    assert frames == []
    assert body["detail"] == (
        "The message holds an invisible NUL character (U+0000, most often pasted from a binary file);"
        " remove it and send again."
    )
    # default zh-CN, naming the field in Chinese (try20: "message 不能包含 …")
    assert body["message"].startswith("消息里有一个看不见的 NUL 字符（U+0000")


def test_nul_in_preferences_is_refused_and_the_old_text_kept(client: httpx.Client) -> None:
    user = _user()
    assert (
        client.put("/api/preferences", json={"user_name": user, "preferences": "metric"}).status_code == 200
    )
    response = client.put(
        "/api/preferences",
        json={"user_name": user, "preferences": "a\x00b"},
        headers={"Accept-Language": "en"},
    )
    body = _refused(response)
    assert body["message"] == body["detail"] and "NUL" in body["message"]
    assert client.get("/api/preferences", params={"user_name": user}).json()["preferences"] == "metric"


def test_schedule_names_and_prompts_refuse_what_cannot_be_shown_or_stored(client: httpx.Client) -> None:
    base = {"user_name": _user(), "name": "Gas report", "prompt": "hello gas", "cron": "0 9 * * *"}
    headers = {"Accept-Language": "en"}
    for field, value in (("name", "a\x00b"), ("name", "报告\u202egpj.exe"), ("prompt", "a\x00b")):
        response = client.post("/api/schedules", json={**base, field: value}, headers=headers)
        body = _refused(response, 422)
        assert body["field"] == field, body
        assert ("NUL" if field == "prompt" else "invisible") in body["message"]
    assert client.get("/api/schedules", params={"user_name": base["user_name"]}).json()["items"] == []


def test_titles_refuse_bidi_overrides_and_control_characters(client: httpx.Client) -> None:
    user = _user()
    response, _ = post_chat(client, message="hello", user_name=user)
    session_id = response.headers["x-session-id"]
    url = f"/api/sessions/{session_id}/title"
    for title in ("红砂岗风量报告\u202egpj.exe", "a\x00b", "a\u2066b", "a\u200fb", "a\x1bb"):
        body = _refused(client.put(url, params={"user_name": user}, json={"title": title}))
        assert "标题不能包含控制字符或不可见字符" in body["message"], title
        assert "invisible" in body["detail"]
    renamed = client.put(url, params={"user_name": user}, json={"title": "红砂岗风量报告 v2"})
    assert renamed.status_code == 200 and renamed.json()["title"] == "红砂岗风量报告 v2"


def test_an_upload_named_with_a_bidi_override_is_refused(client: httpx.Client) -> None:
    form = {"message": "look", "user_name": _user()}
    files = {"file": ("报告\u202evsc.exe", b"data")}
    with client.stream("POST", "/api/chat", data=form, files=files) as response:
        response.read()
    body = _refused(response)
    assert "invisible" in body["detail"]


def test_an_answer_and_a_tool_result_holding_nul_are_saved_as_replacement_characters(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    user = _user()
    llm.push(
        {
            "tool_calls": [
                {"id": "read", "name": "read_file", "arguments": {"file_path": "/workspace/uploads/nul.txt"}}
            ]
        },
        {"content": "an\x00swer"},
    )
    form = {"message": "read my file", "user_name": user}
    files = {"file": ("nul.txt", b"left\x00right\n")}
    with client.stream("POST", "/api/chat", data=form, files=files) as response:
        assert response.status_code == 200
        frames = read_frames(response)
        session_id = response.headers["x-session-id"]
    assert frames[-1]["type"] == "done", frames[-3:]
    runs = client.get(f"/api/sessions/{session_id}/runs", params={"user_name": user}).json()["runs"]
    assert [(run["status"], run["error_code"]) for run in runs] == [("success", None)]
    history = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()
    answer = history["messages"][-1]
    assert answer["role"] == "assistant" and answer["content"] == "an\ufffdswer"
    (card,) = answer["tool_calls"]
    assert "left\ufffdright" in card["content"], card
    assert client.get("/health").json()["spool"] == 0, "nothing parked outside the database"


def test_other_typed_fields_with_nul_never_answer_500(client: httpx.Client) -> None:
    """Probe: every other field a person types that reaches a query must not break PostgreSQL."""
    user = _user()
    found = client.get("/api/sessions/search", params={"user_name": user, "q": "a\x00b"})
    assert found.status_code == 200 and found.json()["sessions"] == []
    for fields in ({"request_id": "r\x00"}, {"session_id": "s\x00"}, {"model": "m\x00"}, {"mode": "m\x00"}):
        response, _ = post_chat(client, message="hello", user_name=user, **fields)
        assert response.status_code in (400, 404, 422), (fields, response.status_code)
    (runs_url, title_url) = ("/api/sessions/s%00/runs", "/api/sessions/s%00/title")
    assert client.get(runs_url, params={"user_name": user}).status_code == 404
    assert client.put(title_url, params={"user_name": user}, json={"title": "t"}).status_code == 404
