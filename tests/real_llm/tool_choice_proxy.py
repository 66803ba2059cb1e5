"""A pass-through proxy that can decide *whether* the model calls a tool, for real-server tests.

A 135M-parameter model cannot be relied on to choose a tool, and llama-cpp-python cannot stream
a tool call it chose itself ("Automatic streaming tool choice is not supported"). What it can do
is a call forced through its function-calling format: ``tool_choice`` naming the function, which
it fills with grammar-constrained JSON arguments. While :attr:`ToolChoiceProxy.force` names a
tool, this proxy adds that ``tool_choice`` to a request whose last message is the user's, and
``tool_choice: "none"`` to one that follows a tool result (the answer step). Otherwise it forwards
bytes untouched both ways — the app's own messages, tool schemas and streaming — which keeps test
devices out of the product's code paths. When the server dies mid-stream, the proxy's response
breaks off mid-body too, as a reverse proxy's would.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.scripted_llm.server import bound_port, fresh_socket, make_server


def _force(body: dict[str, Any], tool: str) -> dict[str, Any]:
    messages = body.get("messages") or []
    offered = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
    last = messages[-1].get("role") if messages else None
    if last == "user" and tool in offered:
        return {**body, "tool_choice": {"type": "function", "function": {"name": tool}}}
    if last == "tool":
        return {**body, "tool_choice": "none"}
    return body


class ToolChoiceProxy:
    """Serves ``POST /v1/chat/completions`` on a free loopback port, forwarding to ``upstream``.

    Args:
        upstream: The real server's base URL, e.g. ``http://127.0.0.1:8080/v1``.

    Attributes:
        force: The function a user turn's first step is forced to call (``None``: pass through).
        forced: How many requests had a tool call forced.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.force: str | None = None
        self.forced = 0
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        self._server = server = make_server(app)
        sockets = [fresh_socket()]  # a base_url no earlier server of this process had (fresh_socket)
        self._thread = threading.Thread(
            target=lambda: server.run(sockets=sockets), name="tool-choice-proxy", daemon=True
        )
        self.base_url = ""

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        forced = _force(body, self.force) if self.force else body
        self.forced += isinstance(forced.get("tool_choice"), dict)
        client = httpx.AsyncClient(timeout=None)
        upstream = await client.send(
            client.build_request("POST", f"{self.upstream}/chat/completions", json=forced), stream=True
        )

        async def close() -> None:
            await upstream.aclose()
            await client.aclose()

        return StreamingResponse(
            upstream.aiter_raw(),
            status_code=upstream.status_code,
            media_type=upstream.headers.get("content-type"),
            background=BackgroundTask(close),
        )

    def __enter__(self) -> ToolChoiceProxy:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("tool-choice proxy did not start")
            time.sleep(0.02)
        self.base_url = f"http://127.0.0.1:{bound_port(self._server)}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(5)
