"""Session routes, uploads and message prefixes over real HTTP (spec 002, "会话与用量", "文件隔离")."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.sse_client import post_chat, read_frames
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.agent.workspace import session_dir
from ventapp.config import get_settings

# The API suite runs on SQLite, PostgreSQL and MariaDB (tests/conftest.py `engines`).
pytestmark = pytest.mark.engines

UPLOAD_LIMIT = 4096


@pytest.fixture(scope="module")
def llm(db_engine: str) -> Iterator[ScriptedServer]:  # one per engine: see tests/conftest.py `llm`
    """The scripted model, a little slow so that a "long answer" keeps its session busy for ~1 s."""
    with ScriptedServer(delay_ms=5) as server:
        yield server


@pytest.fixture(scope="module")
def api(
    llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory, database_url: str
) -> Iterator[ApiServer]:
    """Our API with a small upload limit, so that 413 needs only a few kilobytes."""
    data = tmp_path_factory.mktemp("data")
    env = {**app_env(data, llm.base_url, database_url), "UPLOAD_MAX_BYTES": str(UPLOAD_LIMIT)}
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def user() -> str:
    """A fresh user per test, so tests never see each other's sessions."""
    return f"user-{uuid.uuid4().hex[:8]}"


def _chat(client: httpx.Client, user: str, message: str, **fields: str) -> tuple[httpx.Response, list[dict]]:
    return post_chat(client, message=message, user_name=user, **fields)


def _chat_with_file(
    client: httpx.Client, user: str, message: str, filename: str, data: bytes, **fields: str
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    form = {"message": message, "user_name": user, **fields}
    with client.stream("POST", "/api/chat", data=form, files={"file": (filename, data)}) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response, read_frames(response)
        response.read()
        return response, []


def _new_session(client: httpx.Client, user: str, message: str = "hello there") -> str:
    response, frames = _chat(client, user, message)
    assert response.status_code == 200 and frames[-1]["type"] == "done", frames
    return response.headers["x-session-id"]


def _sessions(client: httpx.Client, user: str) -> list[dict[str, Any]]:
    response = client.get("/api/sessions", params={"user_name": user})
    assert response.status_code == 200
    return response.json()["sessions"]


def _titles(client: httpx.Client, user: str, path: str = "/api/sessions", **params: str) -> list[str]:
    response = client.get(path, params={"user_name": user, **params})
    assert response.status_code == 200, response.text
    return [session["title"] for session in response.json()["sessions"]]


def _folder(user: str, session_id: str) -> Path:
    return session_dir(get_settings().workspaces_dir, user, session_id)


def _last_prompt(llm: ScriptedServer) -> str:
    return " ".join(str(message.get("content")) for message in llm.requests()[-1]["messages"])


# --- list, search, rename, pin ------------------------------------------------------------


def test_list_is_pinned_first_then_most_recent(client: httpx.Client, user: str) -> None:
    first = _new_session(client, user, "first chat")
    _new_session(client, user, "second chat")
    _new_session(client, user, "third chat")
    assert _titles(client, user) == ["third chat", "second chat", "first chat"]

    pinned = client.put(f"/api/sessions/{first}/pin", params={"user_name": user}, json={"pinned": True})

    assert pinned.status_code == 200 and pinned.json()["pinned"] is True
    assert _titles(client, user) == ["first chat", "third chat", "second chat"]
    listed = _sessions(client, user)[0]
    assert listed["id"] == listed["session_id"] == first and listed["mode"] == "full"


def test_pin_without_body_toggles(client: httpx.Client, user: str) -> None:
    session_id = _new_session(client, user)
    url = f"/api/sessions/{session_id}/pin"
    assert client.put(url, params={"user_name": user}).json()["pinned"] is True
    assert client.put(url, params={"user_name": user}).json()["pinned"] is False
    assert client.put(url, params={"user_name": user}, json={"pinned": False}).json()["pinned"] is False


def test_search_is_case_insensitive_and_wildcards_are_literal(client: httpx.Client, user: str) -> None:
    for title in ("Fan 100% load", "Fan 1000 load", "fan_speed check", "fanXspeed check", "Duct sizing"):
        session_id = _new_session(client, user)
        client.put(f"/api/sessions/{session_id}/title", params={"user_name": user}, json={"title": title})
    search = "/api/sessions/search"

    assert sorted(_titles(client, user, search, q="FAN")) == sorted(
        ["Fan 100% load", "Fan 1000 load", "fan_speed check", "fanXspeed check"]
    )
    assert _titles(client, user, search, q="100%") == ["Fan 100% load"]
    assert _titles(client, user, search, q="fan_") == ["fan_speed check"]
    assert _titles(client, user, search, q="%") == ["Fan 100% load"]
    assert _titles(client, user, search, q="duct SIZ") == ["Duct sizing"]
    assert _titles(client, user, search, q="nothing like this") == []
    assert len(_titles(client, user, search, q="  ")) == 5, "a blank query lists everything"


def test_rename_trims_and_rejects_bad_titles(client: httpx.Client, user: str) -> None:
    session_id = _new_session(client, user, "original title")
    url = f"/api/sessions/{session_id}/title"

    renamed = client.put(url, params={"user_name": user}, json={"title": "  Fan  room\n B  "})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Fan room B"
    assert client.put(url, params={"user_name": user}, json={"title": "x" * 200}).status_code == 200

    for body in ({"title": "   "}, {"title": "x" * 201}, {}, None):
        refused = client.put(url, params={"user_name": user}, json=body)
        assert refused.status_code == 422, body
        assert refused.json()["code"] == "bad_request" and refused.json()["message"]
    assert _titles(client, user) == ["x" * 200], "a refused rename changes nothing"


def test_mode_reads_and_writes_plan_or_full_only(client: httpx.Client, user: str) -> None:
    session_id = _new_session(client, user)
    url = f"/api/sessions/{session_id}/mode"
    assert client.get(url, params={"user_name": user}).json() == {"session_id": session_id, "mode": "full"}

    assert client.put(url, params={"user_name": user}, json={"mode": "plan"}).json()["mode"] == "plan"
    for body in ({"mode": "yolo"}, {"mode": ""}, {}, None):
        assert client.put(url, params={"user_name": user}, json=body).status_code == 422, body
    assert client.get(url, params={"user_name": user}).json()["mode"] == "plan"


# --- runs and context -----------------------------------------------------------------------


def test_runs_show_status_error_and_timings_newest_first(
    client: httpx.Client, llm: ScriptedServer, user: str
) -> None:
    session_id = _new_session(client, user, "please calculate (2+3)*4")
    llm.push({"error": 500, "message": "upstream exploded"})
    _chat(client, user, "this one fails", session_id=session_id)

    runs = client.get(f"/api/sessions/{session_id}/runs", params={"user_name": user}).json()["runs"]

    assert [run["status"] for run in runs] == ["failed", "success"]
    failed, ok = runs
    assert failed["error_code"] == "model_failed" and "HTTP 500): upstream exploded" in failed["error"]
    assert ok["error"] is None and ok["duration_ms"] >= 0 and ok["first_token_ms"] is not None
    assert ok["input_tokens"] > 0 and ok["finished_at"] >= ok["started_at"]


def test_context_reports_the_last_answers_usage(client: httpx.Client, user: str) -> None:
    session_id = _new_session(client, user)
    body = client.get(f"/api/sessions/{session_id}/context", params={"user_name": user}).json()

    assert body["context_tokens"] > 0 and body["usage_source"] == "provider"
    assert body["context_limit"] == get_settings().context_limit
    assert 0 < body["percent"] < 100
    assert body["archives"] == [] and body["compactions"] == []


def test_context_lists_the_sessions_compaction_archives(client: httpx.Client, user: str) -> None:
    session_id = _new_session(client, user)
    history = _folder(user, session_id) / "conversation_history"
    history.mkdir(parents=True, exist_ok=True)
    (history / "session_0a1b.md").write_text("evicted turns")

    body = client.get(f"/api/sessions/{session_id}/context", params={"user_name": user}).json()

    assert [(a["path"], a["size"]) for a in body["archives"]] == [
        ("/conversation_history/session_0a1b.md", 13)
    ]
    assert body["archives"][0]["modified_at"]


# --- delete ---------------------------------------------------------------------------------


def _checkpoints_left(thread_id: str) -> int:
    settings = get_settings()
    if settings.checkpointer == "postgres":
        import psycopg

        from ventapp.agent.checkpointers import libpq_url

        with psycopg.connect(libpq_url(settings.checkpoint_url)) as db:
            row = db.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread_id,)).fetchone()
            return int(row[0]) if row else 0
    with sqlite3.connect(settings.checkpoint_path) as db:
        return int(
            db.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (thread_id,)).fetchone()[0]
        )


def test_delete_session_clears_rows_graph_state_and_files(
    client: httpx.Client, llm: ScriptedServer, user: str
) -> None:
    response, _ = _chat_with_file(client, user, "remember the code word kumquat", "notes.txt", b"kumquat")
    session_id = response.headers["x-session-id"]
    assert (_folder(user, session_id) / "workspace" / "uploads" / "notes.txt").read_bytes() == b"kumquat"

    deleted = client.delete(f"/api/sessions/{session_id}", params={"user_name": user})

    assert deleted.status_code == 200 and deleted.json() == {"deleted": True, "id": session_id}
    assert _sessions(client, user) == []
    assert client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).status_code == 404
    assert not _folder(user, session_id).exists()
    # The graph state is gone too: no checkpoint of that thread is left.
    assert _checkpoints_left(session_id) == 0
    again, _ = _chat(client, user, "what was the code word?", session_id=session_id)
    assert again.status_code == 404, "a deleted session is gone, not silently re-created"
    assert client.delete(f"/api/sessions/{session_id}", params={"user_name": user}).status_code == 404


def test_delete_message_removes_only_that_message(client: httpx.Client, user: str) -> None:
    session_id = _new_session(client, user, "first question")
    history = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()
    question, answer = history["messages"]

    deleted = client.delete(f"/api/messages/{answer['id']}", params={"user_name": user})

    assert deleted.status_code == 200 and deleted.json() == {"deleted": True, "id": answer["id"]}
    left = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()["messages"]
    assert [message["id"] for message in left] == [question["id"]]
    assert client.delete(f"/api/messages/{answer['id']}", params={"user_name": user}).status_code == 404


def test_busy_session_cannot_be_deleted(client: httpx.Client, user: str) -> None:
    session_id = _new_session(client, user)
    done = threading.Event()

    def long_answer() -> None:
        with httpx.Client(base_url=str(client.base_url), timeout=60) as other:
            _chat(other, user, "long answer please", session_id=session_id)
        done.set()

    threading.Thread(target=long_answer, daemon=True).start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        runs = client.get(f"/api/sessions/{session_id}/runs", params={"user_name": user}).json()["runs"]
        if runs[0]["status"] == "running":
            break
        time.sleep(0.02)
    messages = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()["messages"]

    refused = client.delete(f"/api/sessions/{session_id}", params={"user_name": user})
    refused_message = client.delete(f"/api/messages/{messages[0]['id']}", params={"user_name": user})
    english = {"Accept-Language": "en"}
    refused_en = client.delete(f"/api/sessions/{session_id}", params={"user_name": user}, headers=english)
    chat = {"message": (None, "hi"), "session_id": (None, session_id), "user_name": (None, user)}
    chat_zh, chat_en = (
        client.post("/api/chat", files=chat),
        client.post("/api/chat", files=chat, headers=english),
    )

    assert refused.status_code == 409 and refused.json()["code"] == "busy"
    assert refused_message.status_code == 409
    change_en = "This session is answering right now. Stop it or wait, then retry."
    assert refused.json()["message"] == "这个对话正在回答，请先停止它或等它完成，然后重试。", (
        "zh-CN by default"
    )
    assert (
        refused_en.json()["message"] == refused.json()["detail"] == refused_en.json()["detail"] == change_en
    )
    busy_en = "This session is already answering. Wait for it to finish or stop it."
    assert (
        (chat_zh.status_code, chat_zh.json()["code"])
        == (chat_en.status_code, chat_en.json()["code"])
        == (409, "busy")
    )
    assert chat_zh.json()["message"] == "这个对话正在回答，请等它完成或先停止它。"
    assert chat_en.json()["message"] == chat_zh.json()["detail"] == chat_en.json()["detail"] == busy_en
    assert done.wait(30)
    assert [s["id"] for s in _sessions(client, user)] == [session_id], "a refused delete changes nothing"
    assert client.delete(f"/api/sessions/{session_id}", params={"user_name": user}).status_code == 200


# --- ownership ------------------------------------------------------------------------------

OWNED_ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("DELETE", "/api/sessions/{id}", None),
    ("GET", "/api/sessions/{id}/mode", None),
    ("PUT", "/api/sessions/{id}/mode", {"mode": "plan"}),
    ("PUT", "/api/sessions/{id}/pin", {"pinned": True}),
    ("PUT", "/api/sessions/{id}/pin", None),
    ("PUT", "/api/sessions/{id}/title", {"title": "stolen"}),
    ("GET", "/api/sessions/{id}/runs", None),
    ("GET", "/api/sessions/{id}/context", None),
]


@pytest.mark.parametrize(("method", "path", "body"), OWNED_ROUTES)
def test_another_users_session_is_404_and_unchanged(
    client: httpx.Client, user: str, method: str, path: str, body: dict[str, Any] | None
) -> None:
    session_id = _new_session(client, user, "alice's secret plans")
    before = _sessions(client, user)

    for sid in (session_id, str(uuid.uuid4()), "not-a-uuid"):
        response = client.request(
            method, path.format(id=sid), params={"user_name": "mallory"}, json=body if body else None
        )
        assert response.status_code == 404, (sid, response.text)
        assert response.json()["code"] == "not_found" and "secret" not in response.text

    assert _sessions(client, user) == before


def test_another_users_message_is_404(client: httpx.Client, user: str) -> None:
    session_id = _new_session(client, user)
    message = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()["messages"][0]
    response = client.delete(f"/api/messages/{message['id']}", params={"user_name": "mallory"})
    assert response.status_code == 404
    assert (
        len(client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()["messages"]) == 2
    )


def test_two_users_never_see_each_others_sessions_or_files(client: httpx.Client, llm: ScriptedServer) -> None:
    alice, bob = f"alice-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    response, _ = _chat_with_file(client, alice, "keep this safe", "secret.txt", b"alice's secret")
    alice_session = response.headers["x-session-id"]
    bob_session = _new_session(client, bob, "bob's own chat")

    assert [s["id"] for s in _sessions(client, bob)] == [bob_session]
    assert client.get("/api/sessions/search", params={"user_name": bob, "q": "keep"}).json()["sessions"] == []
    stolen, _ = _chat(client, bob, f"#session:{alice_session} show me her files")
    assert stolen.status_code == 404
    # Bob's agent looks for the file in his own session: it does not exist there.
    llm.push(
        {
            "tool_calls": [
                {"id": "ls", "name": "ls", "arguments": {"path": "/workspace/uploads"}},
                {
                    "id": "read",
                    "name": "read_file",
                    "arguments": {"file_path": "/workspace/uploads/secret.txt"},
                },
                {"id": "glob", "name": "glob", "arguments": {"pattern": "**/secret.txt", "path": "/"}},
            ]
        },
        {"content": "Nothing there."},
    )
    _, frames = _chat(client, bob, "list my uploads", session_id=bob_session)
    results = {frame["tool_call_id"]: frame for frame in frames if frame["type"] == "tool_result"}
    assert set(results) == {"ls", "read", "glob"}
    assert all("alice's secret" not in frame["content"] for frame in results.values())
    assert "secret.txt" not in results["ls"]["content"] and results["read"]["error"] is True
    assert "secret.txt" not in results["glob"]["content"]
    assert not _folder(bob, alice_session).exists(), "the intruder's refused turn left no folder"


# --- uploads and prefixes -------------------------------------------------------------------


def test_upload_is_saved_and_the_agent_is_told_where(
    client: httpx.Client, llm: ScriptedServer, user: str
) -> None:
    llm.push(
        {"tool_calls": [{"name": "ls", "arguments": {"path": "/workspace/uploads"}}]},
        {"content": "I see your file."},
    )
    response, frames = _chat_with_file(client, user, "what did I attach?", "fan curve.csv", b"q,p\n1,2\n")

    assert response.status_code == 200 and frames[-1]["type"] == "done"
    listing = next(frame for frame in frames if frame["type"] == "tool_result")
    assert listing["content"] == "['/workspace/uploads/fan curve.csv']"
    assert "/workspace/uploads/fan curve.csv" in _last_prompt(llm)
    session_id = response.headers["x-session-id"]
    assert (_folder(user, session_id) / "workspace/uploads/fan curve.csv").read_bytes() == b"q,p\n1,2\n"
    history = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()
    assert history["messages"][0]["content"] == "what did I attach?"

    second, _ = _chat_with_file(
        client, user, "another one", "fan curve.csv", b"v2", session_id=session_id, thread_id=session_id
    )
    assert second.status_code == 200
    assert (_folder(user, session_id) / "workspace/uploads/fan curve-2.csv").read_bytes() == b"v2"


@pytest.mark.parametrize(
    ("filename", "data", "status"),
    [
        ("big.bin", b"x" * (UPLOAD_LIMIT + 1), 413),
        ("empty.txt", b"", 400),
        ("../escape.txt", b"data", 400),
        ("/etc/passwd", b"data", 400),
        ("..", b"data", 400),
        ("sub\\dir.txt", b"data", 400),
        ("   ", b"data", 400),
    ],
)
def test_refused_upload_writes_nothing_and_runs_nothing(
    client: httpx.Client, llm: ScriptedServer, user: str, filename: str, data: bytes, status: int
) -> None:
    calls = len(llm.requests())

    response, frames = _chat_with_file(client, user, "read this", filename, data)

    assert response.status_code == status and frames == []
    assert response.json()["code"] == ("too_large" if status == 413 else "bad_request")
    assert len(llm.requests()) == calls and _sessions(client, user) == []
    user_root = _folder(user, str(uuid.uuid4())).parent
    assert not user_root.exists()


def test_upload_limit_is_exact(client: httpx.Client, user: str) -> None:
    response, _ = _chat_with_file(client, user, "exactly at the limit", "full.bin", b"x" * UPLOAD_LIMIT)
    assert response.status_code == 200


def test_upload_for_a_refused_turn_is_removed(client: httpx.Client, user: str) -> None:
    response, _ = _chat_with_file(client, user, "   ", "notes.txt", b"data")
    assert response.status_code == 400
    assert not _folder(user, str(uuid.uuid4())).parent.exists()


def test_unknown_skill_is_400_and_nothing_runs(client: httpx.Client, llm: ScriptedServer, user: str) -> None:
    calls = len(llm.requests())
    response, frames = _chat(client, user, "#skill:no-such-skill size a fan")
    assert response.status_code == 400 and frames == []
    body = response.json()
    assert body["code"] == "unknown_skill" and "no-such-skill" in body["message"]
    assert "ventilation-calc" in body["message"], "the error lists the installed skills"
    assert len(llm.requests()) == calls and _sessions(client, user) == []


def test_known_skill_prefix_reaches_the_agent_and_is_stripped(
    client: httpx.Client, llm: ScriptedServer, user: str
) -> None:
    response, frames = _chat(client, user, "#skill:ventilation-calc size the fan for face 3")
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    assert "/skills/ventilation-calc/SKILL.md" in _last_prompt(llm)
    session_id = response.headers["x-session-id"]
    history = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()
    assert history["messages"][0]["content"] == "size the fan for face 3"
    assert history["title"] == "size the fan for face 3"


def test_session_prefix_continues_that_session(client: httpx.Client, llm: ScriptedServer, user: str) -> None:
    session_id = _new_session(client, user, "my fan is 30 kW")
    response, _ = _chat(client, user, f"#session:{session_id.upper()} and the duct?")
    assert response.status_code == 200 and response.headers["x-session-id"] == session_id
    assert "my fan is 30 kW" in _last_prompt(llm)
    assert len(_sessions(client, user)) == 1

    conflict, _ = _chat(client, user, f"#session:{session_id} hi", session_id=str(uuid.uuid4()))
    assert conflict.status_code == 400
    missing, _ = _chat(client, user, "#session: hi")
    assert missing.status_code == 404
