"""The API app's own ASGI middleware (``ventapp.api.app``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from ventapp.agent.identity import normalize_user_name
from ventapp.api.app import _Utf8QueryString, create_api


async def _echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    request = Request(scope, receive)
    await JSONResponse({"user_name": request.query_params.get("user_name")})(scope, receive, send)


def _get(query_string: bytes) -> str | None:
    """``GET /?<query_string>`` through the middleware, the bytes as the server got them off the wire."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "raw_path": b"/",
        "query_string": query_string,
        "headers": [],
    }
    asyncio.run(_Utf8QueryString(_echo)(scope, receive, send))
    return json.loads(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))[
        "user_name"
    ]


def test_a_raw_utf8_name_in_the_query_string_is_read_as_utf8() -> None:
    """Tester: ``curl "…/api/sessions?user_name=王工"`` (not percent-encoded; Granian passes the bytes
    on) was 400 "user_name 不能包含控制字符…": Starlette read the query string's bytes as Latin-1."""
    name = _get("user_name=王工&x=1".encode())
    assert name == "王工" and normalize_user_name(name) == "王工"
    # Percent-encoded (what browsers and httpx send) and plain ASCII read as before.
    assert _get(b"user_name=%E7%8E%8B%E5%B7%A5") == "王工"
    assert _get(b"user_name=alice+b") == "alice b"
    # Bytes that are no UTF-8 are read as before (Latin-1): nothing to guess.
    assert _get(b"user_name=Zo\xeb") == "Zo\u00eb"


def test_the_api_app_reads_raw_query_bytes_as_utf8() -> None:
    assert any(middleware.cls is _Utf8QueryString for middleware in create_api().user_middleware)
