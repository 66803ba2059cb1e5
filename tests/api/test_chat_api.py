"""POST /api/chat and GET /api/chat/history over real HTTP against the scripted model (spec 002)."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.api.sse_client import post_chat, read_frames
from tests.scripted_llm.server import ScriptedServer

# The API suite runs on SQLite, PostgreSQL and MariaDB (tests/conftest.py `engines`).
pytestmark = pytest.mark.engines


def _types(frames: list[dict]) -> list[str]:
    return [frame["type"] for frame in frames]


def test_chat_streams_tool_call_and_answer_with_contract_headers(client: httpx.Client) -> None:
    response, frames = post_chat(client, message="please calculate (12+8)*3")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    session_id = response.headers["x-session-id"]
    trace_id = response.headers["x-trace-id"]
    assert uuid.UUID(session_id) and uuid.UUID(response.headers["x-run-id"])
    assert all(frame["session_id"] == session_id and frame["trace_id"] == trace_id for frame in frames)

    types = _types(frames)
    assert types[0] == "agent_start" and types[-1] == "done"
    call = next(frame for frame in frames if frame["type"] == "tool_call")
    result = next(frame for frame in frames if frame["type"] == "tool_result")
    assert call["tool"] == "calculate" and call["args"] == {"expression": "(12+8)*3"}
    assert call["cn_tool"] == "计算器"
    assert (
        result["tool_call_id"] == call["tool_call_id"]
        and result["content"] == "60"
        and result["error"] is False
    )
    assert types.index("tool_call") < types.index("tool_result") < types.index("done")
    answer = "".join(frame["content"] for frame in frames if frame["type"] == "token")
    assert "60" in answer
    done = frames[-1]
    assert done["usage"]["input_tokens"] > 0 and done["usage"]["usage_source"] == "provider"
    assert done["duration_ms"] >= 0


def test_tool_json_never_leaks_into_tokens(client: httpx.Client) -> None:
    """Pitfall 5: ToolMessages also travel on the messages channel; only AIMessageChunk is a token."""
    _, frames = post_chat(client, message="search fan laws affinity")
    result = next(frame for frame in frames if frame["type"] == "tool_result")
    answer = "".join(frame["content"] for frame in frames if frame["type"] == "token")
    assert '"sources"' in result["content"]
    assert '"sources"' not in answer and "{" not in answer


def test_knowledge_search_produces_deduplicated_citations(client: httpx.Client, llm: ScriptedServer) -> None:
    llm.push(
        {
            "tool_calls": [
                {"name": "knowledge_search", "arguments": {"query": "fan laws", "limit": 3}},
                {"name": "knowledge_search", "arguments": {"query": "fan affinity laws speed", "limit": 3}},
            ]
        },
        {"content": "Fan laws: flow scales with speed."},
    )
    _, frames = post_chat(client, message="tell me about fans")
    results = [frame for frame in frames if frame["type"] == "tool_result"]
    assert len(results) == 2 and results[0]["tool_call_id"] != results[1]["tool_call_id"]
    citations = [frame for frame in frames if frame["type"] == "citations"][-1]
    urls = [item["url"] for item in citations["items"]]
    assert urls, "a knowledge search must yield citations"
    assert len(urls) == len(set(urls)), "citations are de-duplicated by URL"
    assert all(
        url.startswith("/kb/") and item["title"] for url, item in zip(urls, citations["items"], strict=True)
    )
    assert citations["model_only"] is False


@pytest.mark.parametrize(
    ("accept", "title"),
    [(None, "通风机相似定律（比例定律）"), ("en-US,en;q=0.9", "Fan Laws (Affinity Laws) [通风机相似定律]")],
)
def test_an_api_runs_citations_come_in_its_language(
    client: httpx.Client, llm: ScriptedServer, accept: str | None, title: str
) -> None:
    """Citations were English for every client; an API run's language is its Accept-Language (default Chinese)."""
    llm.push(
        {"tool_calls": [{"name": "knowledge_search", "arguments": {"query": "fan laws", "limit": 1}}]},
        {"content": "ok"},
    )
    headers = {"Accept-Language": accept} if accept else {}
    files = {"message": (None, "tell me about fans")}
    with client.stream("POST", "/api/chat", files=files, headers=headers) as response:
        frames = read_frames(response)
    citations = [frame for frame in frames if frame["type"] == "citations"][-1]["items"]
    assert [(item["url"], item["title"]) for item in citations] == [("/kb/fan-laws", title)]


def test_session_continues_with_history(client: httpx.Client, llm: ScriptedServer) -> None:
    response, _ = post_chat(client, message="hello there, my fan is 30 kW")
    session_id = response.headers["x-session-id"]
    response2, frames2 = post_chat(client, message="and again", session_id=session_id, thread_id=session_id)
    assert response2.headers["x-session-id"] == session_id and frames2[-1]["type"] == "done"
    # The checkpointer gave the model the earlier turn: thread_id = session_id (invariant 1).
    last_request = llm.requests()[-1]
    texts = " ".join(str(message.get("content")) for message in last_request["messages"])
    assert "my fan is 30 kW" in texts

    history = client.get(f"/api/chat/history/{session_id}").json()
    roles = [message["role"] for message in history["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert history["messages"][0]["content"] == "hello there, my fan is 30 kW"
    stamps = [message["created_at"] for message in history["messages"]]
    assert stamps == sorted(stamps) and "." in stamps[0], "microsecond timestamps, in order (pitfall 8)"
    assert history["title"].startswith("hello there")


def test_history_keeps_tool_cards_and_citations(client: httpx.Client) -> None:
    response, _ = post_chat(client, message="search gas limits methane")
    history = client.get(f"/api/chat/history/{response.headers['x-session-id']}").json()
    answer = history["messages"][-1]
    assert answer["role"] == "assistant" and answer["tool_calls"][0]["tool"] == "knowledge_search"
    assert answer["tool_calls"][0]["content"] and answer["citations"]


def test_blank_message_is_400_and_a_missing_one_422_json(client: httpx.Client) -> None:
    """OpenAPI says ``message`` is required: without it the request is malformed (422); a message
    that is empty or of blanks (ASCII or Unicode) is well-formed but says nothing (400). ``curl -F
    'message=   '`` sends the field empty: it was 422 "Field required" (tester's item 3)."""
    cases = [({"user_name": "alice"}, 422)] + [
        ({"message": blank}, 400) for blank in ("", "   ", " \t\n ", "\u3000\u00a0")
    ]
    for fields, status in cases:
        response, _ = post_chat(client, **fields)
        assert response.status_code == status, fields
        assert response.json()["code"] == "bad_request" and response.json()["message"]
        if status == 400:
            # ``detail`` keeps the English sentence; ``message`` is in Accept-Language (default zh-CN).
            assert response.json()["detail"] == "The message is empty. Type something to send.", fields
            assert response.json()["message"] == "消息是空的，请输入内容后再发送。", fields
    urlencoded = client.post("/api/chat", data={"message": ""})
    assert (urlencoded.status_code, urlencoded.json()["code"]) == (400, "bad_request")


def test_thread_id_must_equal_session_id(client: httpx.Client) -> None:
    response, _ = post_chat(client, message="hi")
    session_id = response.headers["x-session-id"]
    other = str(uuid.uuid4())
    for fields in ({"session_id": session_id, "thread_id": other}, {"thread_id": other}):
        bad, _ = post_chat(client, message="hi", **fields)
        assert bad.status_code == 404, fields
        assert bad.json()["code"] == "not_found"


def test_another_users_session_is_404(client: httpx.Client, llm: ScriptedServer) -> None:
    response, _ = post_chat(client, message="secret plans", user_name="alice")
    session_id = response.headers["x-session-id"]
    calls_before = len(llm.requests())
    stolen, _ = post_chat(client, message="show me", session_id=session_id, user_name="mallory")
    assert stolen.status_code == 404
    assert len(llm.requests()) == calls_before, "nothing ran for the intruder"
    assert client.get(f"/api/chat/history/{session_id}", params={"user_name": "mallory"}).status_code == 404
    own = client.get(f"/api/chat/history/{session_id}", params={"user_name": "alice"})
    assert own.status_code == 200 and len(own.json()["messages"]) == 2


def test_bad_mode_is_422(client: httpx.Client) -> None:
    response, _ = post_chat(client, message="hi", mode="yolo")
    assert response.status_code == 422


def test_model_failure_is_an_error_frame_and_keeps_the_message(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    llm.push({"error": 500, "message": "upstream\x1b[31m exploded\nTraceback…"})
    response, frames = post_chat(client, message="this will fail")
    assert response.status_code == 200
    error = frames[-1]
    assert error["type"] == "error" and error["code"] == "model_failed", "the server's own failure"
    # The provider's reason, sanitised (issue 19), in the API's default language (Chinese).
    assert "（HTTP 500）：upstream [31m exploded Traceback…" in error["message"]
    assert "\x1b" not in error["message"]
    assert "done" not in _types(frames)
    history = client.get(f"/api/chat/history/{response.headers['x-session-id']}").json()
    assert history["messages"][0]["content"] == "this will fail"
    assert history["messages"][-1]["status"] == "failed"


def test_history_of_unknown_session_is_404(client: httpx.Client) -> None:
    response = client.get(f"/api/chat/history/{uuid.uuid4()}")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_health_reports_model_and_subsystems(client: httpx.Client) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert body["model"]["configured"] is True and body["model"]["name"] == "scripted-demo"
    assert body["config_conflicts"] == [] and body["single_process"] is True


def test_legacy_test_page_is_served(client: httpx.Client) -> None:
    response = client.get("/static/index.html")
    assert response.status_code == 200 and "/api/chat" in response.text
    style, restore = client.get("/static/legacy.css"), client.get("/static/legacy-restore.js")
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")
    assert restore.status_code == 200 and restore.headers["content-type"].startswith("text/javascript")
    assert "/api/chat/history/" in restore.text and "/api/chat/interrupt" in restore.text
    dom = client.get("/static/legacy-dom.js")  # the page's helpers, loaded before its own script
    assert '<script src="/static/legacy-dom.js">' in response.text
    assert dom.status_code == 200 and "window.ventDom" in dom.text
    stop = client.get("/static/legacy-stop.js")  # the page's Stop button, loaded after its own script
    assert '<script src="/static/legacy-stop.js">' in response.text
    assert stop.status_code == 200 and "/api/chat/stop" in stop.text


def test_errors_share_one_json_shape(client: httpx.Client) -> None:
    blank_user = client.get(f"/api/chat/history/{uuid.uuid4()}", params={"user_name": "  "})
    malformed = client.post("/api/chat/resume", json={"session_id": "x"})
    english = {"Accept-Language": "en"}
    blank_en = client.get(f"/api/chat/history/{uuid.uuid4()}", params={"user_name": "  "}, headers=english)
    for response, status in ((blank_user, 400), (blank_en, 400), (malformed, 422)):
        body = response.json()
        assert response.status_code == status and body["code"] == "bad_request"
        assert isinstance(body["message"], str) and isinstance(body["detail"], str)
    # One sentence in two keys: ``detail`` English whatever the language, ``message`` in the asked one.
    assert blank_en.json()["message"] == blank_en.json()["detail"] == blank_user.json()["detail"]
    assert malformed.json()["message"] == "缺少必填字段 interrupt_token。", "a 422 too (default zh-CN)"
    assert "interrupt_token: Field required" in malformed.json()["detail"]


def test_unknown_session_id_is_404_and_creates_nothing(client: httpx.Client, llm: ScriptedServer) -> None:
    """Spec 002: a session that does not exist is 404 — a client cannot mint sessions (or threads)."""
    ghost = str(uuid.uuid4())
    for fields in ({"session_id": ghost}, {"session_id": ghost, "thread_id": ghost}):
        response, _ = post_chat(client, message="hi", **fields)
        assert response.status_code == 404 and response.json()["code"] == "not_found"
    prefixed, _ = post_chat(client, message=f"#session:{ghost} hi")
    assert prefixed.status_code == 404
    assert llm.requests() == [] and client.get(f"/api/chat/history/{ghost}").status_code == 404


def test_unknown_api_paths_answer_json(client: httpx.Client) -> None:
    response = client.get("/api/nope")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_wrong_method_on_a_known_path_is_405_with_allow(client: httpx.Client) -> None:
    """Issue 17 item 11: what OpenAPI does not list for a path is 405 naming what it does list."""
    for method, path, allow in (
        ("GET", "/api/chat", "POST"),
        ("PATCH", "/api/sessions/x/title", "PUT"),
        ("PUT", "/api/usage/today", "GET"),
        ("OPTIONS", "/api/sessions/x/mode", "GET, PUT"),
    ):
        response = client.request(method, path)
        assert response.status_code == 405, (method, path)
        assert response.json()["code"] == "method_not_allowed" and response.headers["allow"] == allow


def test_an_unparsable_body_is_400_in_the_error_shape(client: httpx.Client) -> None:
    response = client.post(
        "/api/chat/resume", content=b"3ec\xff:", headers={"content-type": "application/json"}
    )
    assert response.status_code in (400, 422)
    body = response.json()
    # ``message`` in Accept-Language (default Chinese), ``detail`` the framework's English text.
    assert body["code"] == "bad_request" and body["detail"].isascii() and not body["message"].isascii()


def test_json_body_is_told_to_use_multipart(client: httpx.Client) -> None:
    response = client.post("/api/chat", json={"message": "hi"})
    assert response.status_code == 415 and "multipart/form-data" in response.json()["message"]


def test_every_route_accepts_any_uuid_spelling(client: httpx.Client) -> None:
    response, _ = post_chat(client, message="spelling check", user_name="ursula")
    upper = response.headers["x-session-id"].upper()
    params = {"user_name": "ursula"}
    assert client.get(f"/api/chat/history/{upper}", params=params).status_code == 200
    assert client.get(f"/api/sessions/{upper}/runs", params=params).status_code == 200
    assert client.post("/api/chat/stop", data={"session_id": upper, **params}).json() == {"stopped": False}
    assert client.get(f"/api/chat/history/{upper}", params={"user_name": "mallory"}).status_code == 404


# --- uploads whose names or shape the README refuses (issue 17 item 10) --------------------


def _multipart(*parts: tuple[bytes, bytes]) -> tuple[bytes, dict[str, str]]:
    """A hand-made multipart body (header bytes exactly as given) and its content type."""
    chunks = [b"--B\r\n" + headers + b"\r\n\r\n" + body + b"\r\n" for headers, body in parts]
    return b"".join(chunks) + b"--B--\r\n", {"content-type": "multipart/form-data; boundary=B"}


def _field(name: str, value: str) -> tuple[bytes, bytes]:
    return f'Content-Disposition: form-data; name="{name}"'.encode(), value.encode()


def _file(filename: bytes, data: bytes = b"[fonts]\n") -> tuple[bytes, bytes]:
    return b'Content-Disposition: form-data; name="file"; filename="' + filename + b'"', data


@pytest.mark.parametrize(
    ("file_parts", "says"),
    [
        ([_file(b"C:\\windows\\win.ini")], "path"),  # as a browser on Windows may send it
        ([_file(b"C:\\\\windows\\\\win.ini")], "path"),  # quoted-pair escaped, as httpx sends it
        ([_file(b"\\\\server\\share\\a.txt")], "path"),
        ([(b'Content-Disposition: form-data; name="file"', b"no file name")], "no file name"),
        ([_file(b"")], "no name"),
        ([_file(b"caf\xe9.txt")], "UTF-8"),  # Latin-1 bytes, not UTF-8
        ([_file(b"a.txt"), _file(b"b.txt")], "one file"),
    ],
)
def test_refused_upload_shapes_are_clear_400s(
    client: httpx.Client, llm: ScriptedServer, file_parts: list[tuple[bytes, bytes]], says: str
) -> None:
    user = f"up-{uuid.uuid4().hex[:8]}"
    body, headers = _multipart(_field("message", "read this"), _field("user_name", user), *file_parts)
    response = client.post("/api/chat", content=body, headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "bad_request" and says in response.json()["detail"]
    assert llm.requests() == [], "nothing ran"
    assert client.get("/api/sessions", params={"user_name": user}).json()["sessions"] == []


def test_a_utf8_file_name_is_kept_as_sent(client: httpx.Client, llm: ScriptedServer) -> None:
    body, headers = _multipart(
        _field("message", "read this"), _field("user_name", "uploader"), _file("风量 测定.csv".encode())
    )
    response = client.post("/api/chat", content=body, headers=headers)
    assert response.status_code == 200
    prompt = " ".join(str(message.get("content")) for message in llm.requests()[0]["messages"])
    assert "/workspace/uploads/风量 测定.csv" in prompt


def _user_texts(client: httpx.Client, session_id: str) -> list[str]:
    history = client.get(f"/api/chat/history/{session_id}").json()
    return [message["content"] for message in history["messages"] if message["role"] == "user"]


def test_fork_turn_edits_a_message_and_drops_what_followed(client: httpx.Client) -> None:
    """The UI's edit and regenerate, for API clients: the turn replaces that user message onwards."""
    response, _ = post_chat(client, message="first: my fan is 30 kW")
    session_id = response.headers["x-session-id"]
    post_chat(client, message="second question", session_id=session_id)
    post_chat(client, message="third question", session_id=session_id)

    response, frames = post_chat(client, message="second, edited", session_id=session_id, fork_turn="1")
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    assert _user_texts(client, session_id) == ["first: my fan is 30 kW", "second, edited"]
    roles = [m["role"] for m in client.get(f"/api/chat/history/{session_id}").json()["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]

    response, frames = post_chat(
        client, message="first: my fan is 30 kW", session_id=session_id, fork_turn="0"
    )
    assert response.status_code == 200 and frames[-1]["type"] == "done"  # regenerate the first answer
    assert _user_texts(client, session_id) == ["first: my fan is 30 kW"]


def test_fork_turn_errors_leave_the_conversation_as_it_was(client: httpx.Client) -> None:
    response, _ = post_chat(client, message="only question")
    session_id = response.headers["x-session-id"]
    sessions_before = client.get("/api/sessions").json()

    beyond, _ = post_chat(client, message="edited", session_id=session_id, fork_turn="5")
    assert (beyond.status_code, beyond.json()["code"]) == (409, "no_turn")
    no_session, _ = post_chat(client, message="edited", fork_turn="0")
    assert (no_session.status_code, no_session.json()["code"]) == (400, "bad_request")
    assert "session_id" in no_session.json()["message"]
    negative, _ = post_chat(client, message="edited", session_id=session_id, fork_turn="-1")
    assert negative.status_code == 422 and negative.json()["errors"]
    for blank in ("", "  "):  # an explicitly empty field is a client bug, not "no fork_turn"
        empty, _ = post_chat(client, message="edited", session_id=session_id, fork_turn=blank)
        assert empty.status_code == 422, f"{blank!r} was taken for no fork_turn"
        assert empty.json()["code"] == "bad_request" and empty.json()["errors"][0]["loc"] == [
            "body",
            "fork_turn",
        ]
    assert _user_texts(client, session_id) == ["only question"]
    assert client.get("/api/sessions").json() == sessions_before, "no session was opened or changed"


def test_history_gives_each_answer_its_duration_and_each_question_its_files(client: httpx.Client) -> None:
    """Tester: after a reload the legacy page lost the answer's "7.7 s" and the question's file chip,
    which the history did not carry (the README says ``done.duration_ms`` is the one it shows)."""
    with client.stream(
        "POST",
        "/api/chat",
        files={
            "message": (None, "please calculate (12+8)*3"),
            "user_name": (None, "historian"),
            "file": ("fans.csv", b"fan,kW\nA,30\n", "text/csv"),
        },
    ) as response:
        frames = read_frames(response)
    assert frames[-1]["type"] == "done"
    session_id = response.headers["x-session-id"]

    history = client.get(f"/api/chat/history/{session_id}", params={"user_name": "historian"}).json()
    question, answer = history["messages"]
    assert question["attachments"] == ["/workspace/uploads/fans.csv"] and question["duration_ms"] is None
    assert answer["duration_ms"] == frames[-1]["duration_ms"], "the figure the done frame carried"
    assert answer["attachments"] == []
    runs = client.get(f"/api/sessions/{session_id}/runs", params={"user_name": "historian"}).json()["runs"]
    assert runs[0]["duration_ms"] == answer["duration_ms"]
    shown = client.get(
        f"/api/sessions/{session_id}/files",
        params={"path": question["attachments"][0], "user_name": "historian"},
    )
    assert shown.status_code == 200 and shown.content == b"fan,kW\nA,30\n", "a path the files route serves"


def test_history_offers_the_url_of_each_workspace_file_an_answer_links(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    """Tester: ``![network](/workspace/results/…png)`` is a path a legacy client cannot fetch; the
    answer keeps it (as stored) and ``workspace_links`` says where the session's files route serves it."""
    llm.push(
        {"content": "The data: [fans](/workspace/uploads/fans.csv) and ![net](/workspace/uploads/fans.csv)."}
    )
    with client.stream(
        "POST",
        "/api/chat",
        files={
            "message": (None, "show my data"),
            "user_name": (None, "linker"),
            "file": ("fans.csv", b"fan,kW\nA,30\n", "text/csv"),
        },
    ) as response:
        assert read_frames(response)[-1]["type"] == "done"
    session_id = response.headers["x-session-id"]
    question, answer = client.get(f"/api/chat/history/{session_id}", params={"user_name": "linker"}).json()[
        "messages"
    ]
    assert "](/workspace/uploads/fans.csv)" in answer["content"], "the stored answer is unchanged"
    (link,) = answer["workspace_links"]
    assert link == {
        "path": "/workspace/uploads/fans.csv",
        "url": f"/api/sessions/{session_id}/files?path=/workspace/uploads/fans.csv",
    }
    assert question["workspace_links"] == []
    served = client.get(link["url"] + "&user_name=linker")  # httpx's params would replace the query
    assert served.status_code == 200 and served.content == b"fan,kW\nA,30\n"
