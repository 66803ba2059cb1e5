"""Cross-site refusal, body limit, unknown methods and security headers (issue 17 items 1, 2, 11)."""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api.sse_client import post_chat
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.api.guards import BODY_MARGIN_BYTES, HttpGuard, OriginPolicy

LEGACY = "http://legacy.example:8080"
EVIL = "https://evil.example"
UPLOAD_LIMIT = 1024


@pytest.fixture(scope="module")
def api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    """The API with the legacy frontend's origin listed and a small upload limit.

    One server per module: two in one process would share the agent's cached clients.
    """
    env = {
        **app_env(tmp_path_factory.mktemp("data"), llm.base_url),
        "CORS_ORIGINS": f"{LEGACY}, https://other.example",
        "UPLOAD_MAX_BYTES": str(UPLOAD_LIMIT),
    }
    with patched_env(env), ApiServer() as server:
        yield server


def _state_changing(client: httpx.Client, headers: dict[str, str]) -> list[httpx.Response]:
    session = str(uuid.uuid4())
    return [
        client.post(
            "/api/chat", files={"message": (None, "hi"), "user_name": (None, "victim")}, headers=headers
        ),
        client.put(
            "/api/usage/quota", params={"user_name": "victim"}, json={"daily_token_limit": 1}, headers=headers
        ),
        client.delete(f"/api/sessions/{session}", params={"user_name": "victim"}, headers=headers),
        client.post("/api/chat/stop", data={"session_id": session, "user_name": "victim"}, headers=headers),
    ]


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": EVIL},
        {"origin": "null"},
        {"origin": EVIL, "sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
        {"origin": "http://127.0.0.1:1"},  # same host, another port: another origin
    ],
)
def test_cross_site_state_changes_are_403_and_change_nothing(
    client: httpx.Client, llm: ScriptedServer, headers: dict[str, str]
) -> None:
    for response in _state_changing(client, headers):
        assert response.status_code == 403, (response.request.method, response.request.url)
        body = response.json()
        assert body["code"] == "forbidden" and "CORS_ORIGINS" in body["message"]
    assert llm.requests() == [], "no chat ran"
    quota = client.get("/api/usage/today", params={"user_name": "victim"}).json()
    assert quota["daily_token_limit"] != 1, "the victim's quota is untouched"


def test_own_origin_and_non_browser_clients_pass(client: httpx.Client, api: ApiServer) -> None:
    for headers in ({"origin": api.url, "sec-fetch-site": "same-origin"}, {}, {"sec-fetch-site": "none"}):
        response, frames = post_chat_with(client, headers)
        assert response.status_code == 200 and frames[-1]["type"] == "done", headers


def test_a_listed_origin_may_change_state_and_others_may_not(client: httpx.Client) -> None:
    response, frames = post_chat_with(client, {"origin": LEGACY, "sec-fetch-site": "cross-site"})
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    assert (
        client.put(
            "/api/usage/quota",
            params={"user_name": "legacy"},
            json={"daily_token_limit": 5},
            headers={"origin": LEGACY},
        ).json()["daily_token_limit"]
        == 5
    )
    refused, _ = post_chat_with(client, {"origin": "http://legacy.example:8081"})
    assert refused.status_code == 403


def test_reads_are_not_refused_cross_site(client: httpx.Client) -> None:
    """Reading is harmless without CORS headers (the browser hides the answer); links keep working."""
    response = client.get("/health", headers={"origin": EVIL, "sec-fetch-site": "cross-site"})
    assert response.status_code == 200


def post_chat_with(client: httpx.Client, headers: dict[str, str]) -> tuple[httpx.Response, list[dict]]:
    client.headers.update(headers)
    try:
        return post_chat(client, message="hello", user_name="guarded")
    finally:
        for key in headers:
            del client.headers[key]


def test_security_headers_on_every_kind_of_response(client: httpx.Client) -> None:
    stream, _ = post_chat(client, message="hello")
    responses = [
        client.get("/health"),
        client.get("/static/index.html"),
        client.get("/api/nope"),
        client.request("TRACE", "/api/sessions"),
        stream,
    ]
    for response in responses:
        headers = response.headers
        assert headers["x-content-type-options"] == "nosniff", response.request.url
        assert "frame-ancestors 'self'" in headers["content-security-policy"]
        assert headers["referrer-policy"] == "same-origin"


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PROPFIND"])
def test_unknown_methods_are_405_json(client: httpx.Client, method: str) -> None:
    for path in ("/api/sessions", "/api/chat", "/"):
        response = client.request(method, path)
        assert response.status_code == 405, (method, path)
        assert response.json()["code"] == "method_not_allowed" and "GET" in response.headers["allow"]


def _raw_request(url: str, head: str) -> socket.socket:
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    sock.sendall(head.encode())
    return sock


def _read_status(sock: socket.socket) -> int:
    data = sock.recv(65536)
    return int(data.split(b" ", 2)[1])


def test_declared_oversize_body_is_413_before_any_of_it_is_sent(api: ApiServer) -> None:
    size = 50 * 1024 * 1024
    head = (
        "POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
        f"Content-Length: {size}\r\n\r\n"
    )
    with _raw_request(api.url, head) as sock:
        assert _read_status(sock) == 413, "answered without waiting for the 50 MiB"


def test_chunked_oversize_body_is_413_as_soon_as_it_passes_the_limit(
    api: ApiServer, llm: ScriptedServer
) -> None:
    llm.reset()
    head = (
        "POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    preamble = b'--B\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n'
    chunk = b"x" * 65536
    limit = UPLOAD_LIMIT + BODY_MARGIN_BYTES
    sent = 0
    with _raw_request(api.url, head) as sock:
        sock.sendall(b"%x\r\n%s\r\n" % (len(preamble), preamble))
        sock.setblocking(False)
        answered = False
        deadline = time.monotonic() + 20
        while sent < 8 * limit and time.monotonic() < deadline:
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                pass
            try:
                if sock.recv(1, socket.MSG_PEEK):
                    answered = True
                    break
            except BlockingIOError:
                time.sleep(0.001)
        assert answered, f"no answer after {sent:,} bytes"
        sock.setblocking(True)
        assert _read_status(sock) == 413
    assert sent < 3 * limit, f"the server read {sent:,} bytes before refusing"
    assert llm.requests() == []


def _answer(sock: socket.socket) -> tuple[int, dict[str, object]]:
    """Status and JSON body of a response the server closes after (``connection: close``)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


def test_the_guards_refusals_word_message_by_accept_language(api: ApiServer, client: httpx.Client) -> None:
    """403 cross-site, 413 too large and 405 were English in both fields: ``message`` follows
    ``Accept-Language`` (default Chinese), ``detail`` stays English, ``code`` unchanged."""
    evil = {"origin": EVIL}
    cross = [
        client.delete(f"/api/sessions/{uuid.uuid4()}", headers={**evil, **lang})
        for lang in ({}, {"accept-language": "en"})
    ]
    trace = [
        client.request("TRACE", "/api/sessions", headers=lang) for lang in ({}, {"accept-language": "en"})
    ]
    large = []
    for lang in ("", "Accept-Language: en\r\n"):
        head = f"POST /api/chat HTTP/1.1\r\nHost: x\r\n{lang}Content-Type: text/plain\r\nContent-Length: {10**8}\r\n\r\n"
        with _raw_request(api.url, head) as sock:
            large.append(_answer(sock))
    answers = {
        "拒绝跨站请求": (403, "forbidden", [answer.json() for answer in cross]),
        "不支持 TRACE": (405, "method_not_allowed", [answer.json() for answer in trace]),
    }
    assert [answer.status_code for answer in cross + trace] == [403, 403, 405, 405]
    assert [status for status, _ in large] == [413, 413]
    for chinese, (_, code, (zh, en)) in answers.items():
        assert zh["code"] == en["code"] == code
        assert str(zh["message"]).startswith(chinese), zh
        assert zh["detail"] == en["detail"] == en["message"] and str(en["detail"]).isascii(), en
    assert "CORS_ORIGINS" in str(answers["拒绝跨站请求"][2][0]["message"])
    (zh, en) = [body for _, body in large]
    assert zh["code"] == en["code"] == "too_large" and zh["detail"] == en["detail"]
    assert (
        zh["message"] == "文件超过了上传上限 1 kB。"
        and en["message"] == "The file is larger than the 1 kB an upload may have."
    )
    limits = f"{UPLOAD_LIMIT + BODY_MARGIN_BYTES:,}-byte limit (UPLOAD_MAX_BYTES, {UPLOAD_LIMIT:,} bytes"
    assert limits in zh["detail"] and zh["detail"].isascii(), "the English detail keeps the bytes"


def test_a_body_over_the_limit_names_the_upload_limit_people_were_told() -> None:
    """Tester: a 25 MiB file was "请求体超过了 22,020,096 字节的上限。", a limit nobody configured
    (UPLOAD_MAX_BYTES plus the 1 MiB margin); the UI says "文件超过了上传上限 20 MB。"."""
    upload = 20 * 1024 * 1024
    guard = HttpGuard(None, OriginPolicy([], ui_port=None), max_body_bytes=upload + BODY_MARGIN_BYTES)  # type: ignore[arg-type]
    messages = {
        lang: json.loads(
            guard._too_large({"type": "http", "headers": [(b"accept-language", lang.encode())]})[1]["body"]
        )
        for lang in ("zh-CN", "en")
    }
    assert messages["zh-CN"]["message"] == "文件超过了上传上限 20 MB。"
    assert messages["en"]["message"] == "The file is larger than the 20 MB an upload may have."
    assert "22,020,096" in messages["en"]["detail"] and "20,971,520" in messages["en"]["detail"]


def test_origin_policy_compares_host_and_port() -> None:
    policy = OriginPolicy([LEGACY], ui_port=3000)
    assert policy.allows("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert policy.allows("https://app.example", "app.example", "https")
    assert policy.allows("https://app.example:443", "app.example", "https")
    assert policy.allows("http://localhost:3000", "localhost:8000"), "dev mode: the UI's port on our host"
    assert policy.allows(LEGACY, "127.0.0.1:8000")
    assert policy.allows(LEGACY.upper(), "127.0.0.1:8000")
    for origin in (
        "null",
        "http://localhost:3001",
        "http://evil.example:8000",
        "file://",
        "",
        "http://legacy.example",
    ):
        assert not policy.allows(origin, "localhost:8000"), origin
