"""JSON error bodies: every 422 has the ``errors`` list FastAPI's own validation errors have."""

from __future__ import annotations

import json
import uuid

import httpx

from ventapp.api.errors import error_response


def _body(**kwargs: object) -> dict[str, object]:
    return json.loads(bytes(error_response(**kwargs).body))  # type: ignore[arg-type]


def test_a_hand_made_422_gets_an_errors_entry_naming_its_field() -> None:
    body = _body(
        status=422, code="bad_request", message="mode must be 'plan' or 'full'.", details={"field": "mode"}
    )
    assert body["errors"] == [{"type": "bad_request", "loc": ["body", "mode"], "msg": body["message"]}]
    bare = _body(status=422, code="bad_request", message="Invalid.")
    assert bare["errors"] == [{"type": "bad_request", "loc": [], "msg": "Invalid."}]


def test_errors_given_are_kept_and_other_statuses_get_none() -> None:
    given = [{"type": "value_error", "loc": ["query", "limit"], "msg": "too big", "input": "500"}]
    assert _body(status=422, code="bad_request", message="x", details={"errors": given})["errors"] == given
    assert "errors" not in _body(status=404, code="not_found", message="Not found.")


def test_422s_of_different_routes_share_the_shape(client: httpx.Client) -> None:
    validation = client.post("/api/schedules", json={"user_name": "alice", "name": "x"})
    paging = client.get("/api/usage/recent", params={"limit": "0"})
    for response in (validation, paging):
        assert response.status_code == 422, response.text
        body = response.json()
        assert {"detail", "message", "code", "errors"} <= set(body) and body["errors"], body


ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}
EN = {"Accept-Language": "en-US,en;q=0.9"}


def _refusals(client: httpx.Client, headers: dict[str, str]) -> dict[str, httpx.Response]:
    """One refusal of each kind the chat and session routes give before anything runs."""
    ghost = str(uuid.uuid4())
    return {
        "empty": client.post("/api/chat", files={"message": (None, "   ")}, headers=headers),
        "blank_user": client.get(f"/api/chat/history/{ghost}", params={"user_name": " "}, headers=headers),
        "unsafe_user": client.get("/api/sessions", params={"user_name": "a/b"}, headers=headers),
        "unknown_session": client.post(
            "/api/chat", files={"message": (None, "hi"), "session_id": (None, ghost)}, headers=headers
        ),
        "history_404": client.get(f"/api/chat/history/{ghost}", headers=headers),
        "join_404": client.get("/api/chat/stream", params={"session_id": "nope"}, headers=headers),
        "title_404": client.put(f"/api/sessions/{ghost}/title", json={"title": "x"}, headers=headers),
        "bad_title": client.put(f"/api/sessions/{ghost}/title", json={"title": " "}, headers=headers),
        "no_pause": client.post(
            "/api/chat/resume", json={"session_id": ghost, "interrupt_token": "t"}, headers=headers
        ),
        "unknown_skill": client.post(
            "/api/chat", files={"message": (None, "#skill:nope hi")}, headers=headers
        ),
        "no_rule": client.delete(f"/api/approvals/rules/{ghost}", headers=headers),
        "long_preferences": client.put(
            "/api/preferences", json={"user_name": "ann", "preferences": "x" * 4001}, headers=headers
        ),
        "unknown_model": client.post(
            "/api/chat", files={"message": (None, "hi"), "model": (None, "nope")}, headers=headers
        ),
        "empty_file": client.post(
            "/api/chat", files={"message": (None, "hi"), "file": ("a.txt", b"")}, headers=headers
        ),
    }


EXPECTED = {
    "empty": (
        400,
        "bad_request",
        "The message is empty. Type something to send.",
        "消息是空的，请输入内容后再发送。",
    ),
    "blank_user": (
        400,
        "bad_request",
        "user_name must not be blank: enter a name.",
        "user_name 不能为空，请填写名字。",
    ),
    "unsafe_user": (
        400,
        "bad_request",
        "user_name may hold only letters, digits, spaces and . _ - @ + ' (not '/').",
        "user_name 只能包含文字、数字、空格和 . _ - @ + '（不能包含 '/'）。",
    ),
    "unknown_session": (404, "not_found", "Session not found.", "找不到这个对话：它不存在，或属于其他用户。"),
    "history_404": (404, "not_found", "Session not found.", "找不到这个对话：它不存在，或属于其他用户。"),
    "join_404": (404, "not_found", "Session not found.", "找不到这个对话：它不存在，或属于其他用户。"),
    "title_404": (404, "not_found", "Session not found.", "找不到这个对话：它不存在，或属于其他用户。"),
    "bad_title": (422, "bad_request", "title must be 1–200 characters.", "标题必须为 1–200 个字符。"),
    "no_pause": (404, "not_found", "Session not found.", "找不到这个对话：它不存在，或属于其他用户。"),
    "empty_file": (400, "bad_request", "The file is empty.", "文件是空的。"),
    "no_rule": (404, "not_found", "No such approval rule.", "没有这条审批规则。"),
    "long_preferences": (
        413,
        "too_large",
        "Preferences are limited to 4,000 characters (got 4,001); they are sent with every model call.",
        "偏好设置最多 4,000 个字符（当前 4,001 个）；它会随每次模型调用发送。",
    ),
}


def test_chat_and_session_refusals_word_message_in_accept_language_and_keep_detail(
    client: httpx.Client,
) -> None:
    """``message`` follows Accept-Language (zh-CN by default); ``code`` and the English ``detail`` never change."""
    chinese, english, unstated = _refusals(client, ZH), _refusals(client, EN), _refusals(client, {})
    for kind, (status, code, detail, zh_message) in EXPECTED.items():
        for response, message in (
            (chinese[kind], zh_message),
            (english[kind], detail),
            (unstated[kind], zh_message),
        ):
            body = response.json()
            assert response.status_code == status, (kind, response.text)
            assert (body["code"], body["detail"], body["message"]) == (code, detail, message), kind
    skill = {
        lang: responses["unknown_skill"].json() for lang, responses in (("zh", chinese), ("en", english))
    }
    assert skill["zh"]["code"] == skill["en"]["code"] == "unknown_skill"
    assert skill["en"]["message"] == skill["en"]["detail"] == skill["zh"]["detail"]
    assert skill["en"]["detail"].startswith("There is no skill named 'nope'. Installed skills: ")
    assert skill["zh"]["message"].startswith("没有名为“nope”的技能。已安装的技能：")
    model = {
        lang: responses["unknown_model"].json() for lang, responses in (("zh", chinese), ("en", english))
    }
    assert model["zh"]["code"] == "unknown_model" and model["zh"]["models"] == model["en"]["models"]
    assert model["en"]["message"] == model["en"]["detail"] == model["zh"]["detail"]
    assert model["en"]["detail"].startswith("There is no model route 'nope'. Configured routes: ")
    assert model["zh"]["message"].startswith("没有名为 'nope' 的模型路由。已配置的路由：")
    errors = english["bad_title"].json()["errors"]
    assert errors[0]["msg"] == EXPECTED["bad_title"][2], "errors[].msg stays the English detail"


async def test_a_database_that_refuses_a_route_is_503_in_the_requests_language() -> None:
    from starlette.requests import Request

    from ventapp.api.errors import storage_error_handler

    bodies = {}
    for accept in (b"", b"en"):
        request = Request({"type": "http", "headers": [(b"accept-language", accept)] if accept else []})
        bodies[accept] = json.loads(bytes((await storage_error_handler(request, RuntimeError())).body))
    assert bodies[b""]["message"] == "数据库暂时不可用，请稍后再试。", "zh-CN by default"
    assert bodies[b"en"]["message"] == bodies[b""]["detail"] == bodies[b"en"]["detail"]
    assert bodies[b"en"]["detail"] == "The database is not available right now. Try again shortly."
    assert bodies[b""]["code"] == "storage" and bodies[b""]["retry_after"] == 5


def test_a_malformed_request_is_worded_per_accept_language_naming_the_field(client: httpx.Client) -> None:
    """Tester: FastAPI's own 422 ("Invalid request: message: Field required") was English under the
    default zh-CN; ``message`` names the field in the request's language, ``detail`` and ``errors`` stay."""
    answers = {
        accept: client.post("/api/chat", files={"user_name": (None, "alice")}, headers=headers)
        for accept, headers in (("unstated", {}), ("zh", ZH), ("en", EN))
    }
    bodies = {accept: response.json() for accept, response in answers.items()}
    assert all(response.status_code == 422 for response in answers.values())
    assert bodies["unstated"]["message"] == bodies["zh"]["message"] == "缺少必填字段 message。"
    assert bodies["en"]["message"] == "The field message is required."
    for body in bodies.values():
        assert body["code"] == "bad_request"
        assert body["detail"] == "Invalid request: message: Field required", "detail: the developer text"
        assert [(e["type"], e["loc"]) for e in body["errors"]] == [("missing", ["body", "message"])]
    choice = client.post(
        "/api/chat/resume",
        json={"session_id": "s", "interrupt_token": "t", "decisions": [{"type": "maybe"}]},
        headers=EN,
    ).json()
    assert choice["message"] == "The field decisions.0.type must be one of 'approve', 'edit', 'reject'."


def test_a_body_that_is_no_json_is_worded_per_accept_language(client: httpx.Client) -> None:
    broken = client.post("/api/chat/resume", content=b"{", headers={"content-type": "application/json"})
    assert broken.status_code == 422 and broken.json()["message"] == "请求体不是有效的 JSON。"


def test_the_frameworks_own_refusals_word_message_by_accept_language(client: httpx.Client) -> None:
    """An unknown route, a wrong method and an unreadable body were English in both fields:
    ``message`` follows ``Accept-Language`` (default Chinese), ``detail`` stays English, ``code`` too."""
    broken = {"content": b"x", "headers": {"content-type": "multipart/form-data"}}  # no boundary
    cases = {
        ("GET", "/api/no-such-thing"): (404, "not_found", "没有 GET /api/no-such-thing 这个路由", {}),
        ("DELETE", "/api/usage/today"): (405, "method_not_allowed", "不接受 DELETE，只接受 GET", {}),
        ("POST", "/api/chat/stop"): (400, "bad_request", "请求体不是有效的 JSON 或表单数据", broken),
    }
    for (method, path), (status, code, chinese, extra) in cases.items():
        headers = extra.get("headers", {})
        zh = client.request(method, path, content=extra.get("content"), headers=headers)
        en = client.request(
            method, path, content=extra.get("content"), headers={**headers, "Accept-Language": "en"}
        )
        assert zh.status_code == en.status_code == status, (path, zh.text)
        assert zh.json()["code"] == en.json()["code"] == code, path
        assert chinese in zh.json()["message"], zh.json()
        assert zh.json()["detail"] == en.json()["detail"] and zh.json()["detail"].isascii(), zh.json()
        assert en.json()["message"].isascii() and en.json()["message"] != zh.json()["message"], en.json()


def test_a_length_limit_in_a_422_is_grouped_as_the_language_writes_it() -> None:
    """try17 (H): limits read "100000" in refusals; a 422's ``max_length`` too."""
    from ventapp.api.errors import invalid_request_message

    error = {"type": "string_too_long", "loc": ["body", "message"], "ctx": {"max_length": 100_000}}
    assert "100,000" in invalid_request_message([error], "zh-CN")
    assert "100,000" in invalid_request_message([error], "en")
