"""A real OpenAI-compatible HTTP server whose answers come from :mod:`tests.scripted_llm.script`.

``langchain_openai.ChatOpenAI(base_url=ScriptedServer().base_url, ...)`` talks to it
unmodified, so tests and demos exercise the genuine client, SSE parsing and
tool-call chunk merging instead of a fake chat model. What it sends for a reply (the dialects,
the JSON completion, the SSE chunks) is :mod:`tests.scripted_llm.wire`.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.scripted_llm.replies import ErrorReply, Reply, TextReply, ToolCallsReply
from tests.scripted_llm.script import MODEL_NAME, Script
from tests.scripted_llm.wire import DIALECTS, Dialect, completion_json, dialect_refusal, stream_chunks


@dataclass
class _ServerState:
    script: Script
    delay_ms: int
    dialect: Dialect = DIALECTS["openai"]
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counter: int = 0

    def record(self, body: dict[str, Any]) -> int:
        with self.lock:
            self.requests.append(body)
            self.counter += 1
            return self.counter


def _error_response(status: int, message: str) -> JSONResponse:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


async def _stream(
    body: Mapping[str, Any], reply: TextReply | ToolCallsReply, request_no: int, state: _ServerState
) -> AsyncIterator[str]:
    for position, chunk in enumerate(stream_chunks(body, reply, request_no, state.dialect)):
        if state.delay_ms and position:
            await asyncio.sleep(state.delay_ms / 1000)
        yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
    yield "data: [DONE]\n\n"


def _state(request: Request) -> _ServerState:
    return request.app.state.scripted


async def _chat_completions(request: Request) -> Response:
    state = _state(request)
    try:
        body = await request.json()
    except ValueError:
        return _error_response(400, "request body is not valid JSON")
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return _error_response(400, "'messages' must be a list")
    request_no = state.record(body)
    refusal = dialect_refusal(state.dialect, body)
    if refusal is not None:
        return _error_response(500, refusal)
    reply: Reply = state.script.next_reply(body)
    if isinstance(reply, ErrorReply):
        return _error_response(reply.status, reply.message)
    if body.get("stream"):
        return StreamingResponse(
            _stream(body, reply, request_no, state),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache"},
        )
    return JSONResponse(completion_json(body, reply, request_no, state.dialect))


async def _models(request: Request) -> Response:
    return JSONResponse(
        {
            "object": "list",
            "data": [{"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "ventagent"}],
        }
    )


async def _requests_log(request: Request) -> Response:
    state = _state(request)
    with state.lock:
        if request.method == "DELETE":
            state.requests.clear()
            return JSONResponse({"cleared": True})
        return JSONResponse(list(state.requests))


async def _script(request: Request) -> Response:
    state = _state(request)
    if request.method == "DELETE":
        state.script.clear()
        return JSONResponse({"queued": 0})
    try:
        payload = await request.json()
        responses = payload["responses"] if isinstance(payload, dict) else payload
        if isinstance(responses, dict):
            responses = [responses]
        queued = state.script.push(*responses)
    except (ValueError, KeyError, TypeError) as exc:
        return _error_response(400, f"bad script payload: {exc}")
    return JSONResponse({"queued": queued})


def create_app(script: Script | None = None, delay_ms: int = 0, dialect: str = "openai") -> Starlette:
    """Build the scripted OpenAI-compatible app.

    Routes: ``POST /v1/chat/completions`` (JSON or SSE), ``GET /v1/models``,
    ``GET|DELETE /_requests`` (log of chat request bodies), ``POST|DELETE /_script``
    (queue ``{"responses": [...]}`` consumed FIFO before the rules).

    Args:
        script: Queue + rules to answer with; a fresh :class:`Script` if ``None``.
        delay_ms: Pause between streamed chunks, to make streaming visible in demos.
        dialect: A name in :data:`DIALECTS`: ``openai`` behaves like OpenAI; ``strict`` refuses
            list and ``null`` content with HTTP 500; ``sloppy`` repeats tool names in every
            chunk and never sends usage. A refused request is still logged.

    Returns:
        The Starlette app; its state is at ``app.state.scripted`` (``script``, ``requests``).
    """
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", _chat_completions, methods=["POST"]),
            Route("/v1/models", _models, methods=["GET"]),
            Route("/_requests", _requests_log, methods=["GET", "DELETE"]),
            Route("/_script", _script, methods=["POST", "DELETE"]),
        ]
    )
    app.state.scripted = _ServerState(script=script or Script(), delay_ms=delay_ms, dialect=DIALECTS[dialect])
    return app


def make_server(
    app: Starlette,
    host: str = "127.0.0.1",
    port: int = 0,
    server_class: type[uvicorn.Server] = uvicorn.Server,
) -> uvicorn.Server:
    """Create (not start) a quiet uvicorn server for ``app``.

    Args:
        app: The app from :func:`create_app`.
        host: Interface to bind.
        port: TCP port; ``0`` lets the OS pick a free one.
        server_class: ``uvicorn.Server`` or a subclass (e.g. one that hooks ``startup``).

    Returns:
        The server; after ``started`` is true, :func:`bound_port` gives the real port.
    """
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="off", timeout_graceful_shutdown=2
    )
    return server_class(config)


_served_ports: set[int] = set()
_served_lock = threading.Lock()


def fresh_socket(host: str = "127.0.0.1", attempts: int = 50) -> socket.socket:
    """Bind a TCP socket on a free port that no server of this process has served on before.

    The OS hands a released port out again now and then (a few times in a few hundred binds to
    port 0), and langchain-openai caches its async httpx client per ``base_url`` for the life of
    the process. A server on an earlier test's port would be reached through that test's client,
    whose pooled connection belongs to its closed event loop: "Event loop is closed".

    Args:
        host: Interface to bind (IPv4, or IPv6 when it holds a colon).
        attempts: Ports to try before giving up.

    Returns:
        The bound socket (not listening yet); pass it to ``uvicorn.Server.run(sockets=[...])``.

    Raises:
        RuntimeError: Every port the OS offered had been served on before.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    refused: list[socket.socket] = []  # held open until the end, so the OS offers others
    try:
        for _ in range(attempts):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds its own
            sock.bind((host, 0))
            port = sock.getsockname()[1]
            with _served_lock:
                if port not in _served_ports:
                    _served_ports.add(port)
                    return sock
            refused.append(sock)
    finally:
        for sock in refused:
            sock.close()
    raise RuntimeError(f"no port on {host} this process has not served on before, in {attempts} tries")


def bound_port(server: uvicorn.Server) -> int:
    """Return the port a started uvicorn server actually listens on.

    Args:
        server: A server whose ``started`` flag is true.

    Returns:
        The TCP port (useful when it was created with port 0).
    """
    return server.servers[0].sockets[0].getsockname()[1]


class ScriptedServer:
    """Runs :func:`create_app` under uvicorn in a background thread, for sync or async tests.

    Example::

        with ScriptedServer() as llm:
            model = ChatOpenAI(base_url=llm.base_url, api_key="x", model="scripted-demo")
            llm.push({"content": "canned"})

    Prefer one server per test in async tests: langchain-openai caches its async
    httpx client per ``base_url``, so reusing a URL across event loops fails with
    "Event loop is closed" (or pass ``http_async_client`` to ``ChatOpenAI``). With ``port=0``
    each server gets a port no earlier one of this process had (:func:`fresh_socket`), so
    its URL is new even when the OS hands a released port out again.

    Args:
        script: Queue + rules to answer with; a fresh :class:`Script` if ``None``.
        delay_ms: Pause between streamed chunks.
        host: Interface to bind.
        port: TCP port; ``0`` (default) picks a free one.
        dialect: ``openai`` (default), ``strict`` or ``sloppy``; see :func:`create_app`.
    """

    def __init__(
        self,
        script: Script | None = None,
        delay_ms: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        dialect: str = "openai",
    ) -> None:
        self.app = create_app(script, delay_ms, dialect)
        self.host = host
        self.port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def _state(self) -> _ServerState:
        return self.app.state.scripted

    @property
    def delay_ms(self) -> int:
        """Pause between streamed chunks (settable while the server runs)."""
        return self._state.delay_ms

    @delay_ms.setter
    def delay_ms(self, value: int) -> None:
        self._state.delay_ms = value

    @property
    def script(self) -> Script:
        """The :class:`Script` answering requests."""
        return self._state.script

    @property
    def url(self) -> str:
        """Root URL, e.g. ``http://127.0.0.1:54321`` (control routes live here)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """OpenAI base URL for clients, e.g. ``http://127.0.0.1:54321/v1``."""
        return f"{self.url}/v1"

    def start(self, timeout: float = 10.0) -> ScriptedServer:
        """Start serving and wait until the socket is bound.

        Args:
            timeout: Seconds to wait for startup.

        Returns:
            ``self``.

        Raises:
            RuntimeError: If the server did not start (e.g. the port is taken).
        """
        if self._thread is not None:
            raise RuntimeError("ScriptedServer already started")
        server = self._server = make_server(self.app, self.host, self.port)
        # Port 0: a port no earlier server of this process had (see fresh_socket), never the OS's pick.
        sockets = [fresh_socket(self.host)] if self.port == 0 else None
        # uvicorn skips signal handlers outside the main thread, so run() is safe here.
        self._thread = threading.Thread(
            target=lambda: server.run(sockets=sockets), name="scripted-llm", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                for sock in sockets or []:
                    sock.close()
                raise RuntimeError(f"scripted LLM server failed to start on {self.host}:{self.port}")
            time.sleep(0.01)
        self.port = bound_port(server)
        with _served_lock:
            _served_ports.add(self.port)  # a port asked for by number is not handed out afterwards
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server and join its thread; safe to call twice.

        Args:
            timeout: Seconds to wait for a graceful shutdown before forcing it.
        """
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():
            # Lingering streaming connections would otherwise keep the thread alive.
            server.force_exit = True
            thread.join(timeout)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def requests(self) -> list[dict[str, Any]]:
        """Return a copy of the chat request bodies received so far (oldest first)."""
        with self._state.lock:
            return list(self._state.requests)

    def push(self, *responses: Reply | Mapping[str, Any]) -> int:
        """Queue canned replies, consumed FIFO before the rules apply.

        Args:
            *responses: :data:`Reply` objects or ``/_script``-style dicts such as
                ``{"content": "hi"}``, ``{"tool_calls": [{"name": "calculate", "arguments": {...}}]}``
                or ``{"error": 500, "message": "boom"}``.

        Returns:
            The queue length afterwards.
        """
        return self.script.push(*responses)

    def reset(self) -> None:
        """Clear both the request log and the reply queue."""
        self.script.clear()
        with self._state.lock:
            self._state.requests.clear()
