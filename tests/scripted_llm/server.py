"""A real OpenAI-compatible HTTP server whose answers come from :mod:`tests.scripted_llm.script`.

``langchain_openai.ChatOpenAI(base_url=ScriptedServer().base_url, ...)`` talks to it
unmodified, so tests and demos exercise the genuine client, SSE parsing and
tool-call chunk merging instead of a fake chat model.
"""

from __future__ import annotations

import asyncio
import json
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
from tests.scripted_llm.script import (
    MODEL_NAME,
    Script,
    count_prompt_tokens,
    split_arguments,
    split_words,
)


@dataclass(frozen=True)
class Dialect:
    """How closely the server imitates OpenAI's own API, for compatibility tests.

    Attributes:
        name: ``openai`` | ``strict`` | ``sloppy`` (see :data:`DIALECTS`).
        refuse_list_content: Answer 500 to a message whose ``content`` is a list of parts.
        refuse_null_content: Answer 500 to a message whose ``content`` is ``null``.
        repeat_tool_names: Send a tool call's function name in every streamed chunk (and, for the
            first call, a legacy ``function_call`` delta with it), as llama-cpp-python does.
        usage: Report usage (the final chunk for ``stream_options.include_usage``, the JSON field).
        reasoning_field: The delta/message field reasoning is sent in: ``reasoning_content``
            (DeepSeek, Qwen, llama.cpp) or ``reasoning`` (newer vLLM, OpenRouter).
    """

    name: str
    refuse_list_content: bool = False
    refuse_null_content: bool = False
    repeat_tool_names: bool = False
    usage: bool = True
    reasoning_field: str = "reasoning_content"


DIALECTS: dict[str, Dialect] = {
    "openai": Dialect("openai"),
    # What llama-cpp-python 0.3.36 refuses: its chat templates take string content only.
    "strict": Dialect("strict", refuse_list_content=True, refuse_null_content=True),
    # What llama-cpp-python 0.3.36 streams: names repeated per chunk, no usage chunk.
    "sloppy": Dialect("sloppy", repeat_tool_names=True, usage=False),
    # Newer vLLM (and OpenRouter) name the reasoning delta `reasoning`.
    "vllm": Dialect("vllm", reasoning_field="reasoning"),
}
"""The dialects by name: ``openai`` (default), ``strict`` and ``sloppy`` (issue 19)."""


def _refusal(dialect: Dialect, body: Mapping[str, Any]) -> str | None:
    for position, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if dialect.refuse_list_content and isinstance(content, list):
            return f"messages[{position}].content: list content is not supported, expected a string"
        if dialect.refuse_null_content and "content" in message and content is None:
            return f"messages[{position}].content: null is not a valid string"
    return None


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


def _call_id(reply: ToolCallsReply, request_no: int, index: int) -> str:
    return reply.calls[index].id or f"call_{request_no}_{index}"


def _reasoning_tokens(reply: TextReply | ToolCallsReply) -> int:
    return len(split_words(reply.reasoning)) if reply.reasoning else 0


def _completion_tokens(reply: TextReply | ToolCallsReply) -> int:
    # One "token" per streamed piece, so streaming and non-streaming agree and
    # tests can compute the number from the reply alone. Reasoning counts as completion,
    # as DeepSeek and OpenAI count it.
    if isinstance(reply, TextReply):
        return len(split_words(reply.content)) + _reasoning_tokens(reply)
    return sum(
        1 + len(split_arguments(json.dumps(call.arguments))) for call in reply.calls
    ) + _reasoning_tokens(reply)


def _usage(body: Mapping[str, Any], reply: TextReply | ToolCallsReply) -> dict[str, Any]:
    prompt = count_prompt_tokens(body.get("messages") or [], body.get("tools") or [])
    completion = _completion_tokens(reply)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reply.reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": _reasoning_tokens(reply)}
    return usage


def _completion_json(
    body: Mapping[str, Any], reply: TextReply | ToolCallsReply, request_no: int, dialect: Dialect
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if reply.reasoning:
        message[dialect.reasoning_field] = reply.reasoning
    if isinstance(reply, TextReply):
        message["content"] = reply.content
        finish_reason = "stop"
    else:
        message["tool_calls"] = [
            {
                "id": _call_id(reply, request_no, i),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for i, call in enumerate(reply.calls)
        ]
        finish_reason = "tool_calls"
    completion = {
        "id": f"chatcmpl-scripted-{request_no}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_NAME,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
    }
    return {**completion, "usage": _usage(body, reply)} if dialect.usage else completion


def _deltas(reply: TextReply | ToolCallsReply, request_no: int, dialect: Dialect) -> list[dict[str, Any]]:
    # Reasoning first, in its own deltas with empty content, as the providers stream it.
    thinking: list[dict[str, Any]] = (
        [
            {"role": "assistant", "content": "", dialect.reasoning_field: piece}
            for piece in split_words(reply.reasoning)
        ]
        if reply.reasoning
        else []
    )
    return thinking + _answer_deltas(reply, request_no, dialect)


def _answer_deltas(
    reply: TextReply | ToolCallsReply, request_no: int, dialect: Dialect
) -> list[dict[str, Any]]:
    if isinstance(reply, TextReply):
        words = split_words(reply.content)
        return [{"role": "assistant", "content": words[0]}, *({"content": word} for word in words[1:])]
    deltas: list[dict[str, Any]] = []
    for index, call in enumerate(reply.calls):
        # The header chunk carries id/name with empty arguments and the JSON follows
        # in pieces, which is exactly what client-side chunk merging must cope with.
        header = {
            "index": index,
            "id": _call_id(reply, request_no, index),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        delta: dict[str, Any] = {"tool_calls": [header]}
        if index == 0:
            delta = {"role": "assistant", "content": None, **delta}
        deltas.append(delta)
        named = {"name": call.name} if dialect.repeat_tool_names else {}
        for piece in split_arguments(json.dumps(call.arguments)):
            delta = {"tool_calls": [{"index": index, "function": {**named, "arguments": piece}}]}
            if dialect.repeat_tool_names and index == 0:
                # llama-cpp-python also streams the legacy function_call delta, name included.
                delta["function_call"] = {**named, "arguments": piece}
            deltas.append(delta)
    return deltas


async def _stream(
    body: Mapping[str, Any], reply: TextReply | ToolCallsReply, request_no: int, state: _ServerState
) -> AsyncIterator[str]:
    dialect, delay_ms = state.dialect, state.delay_ms
    base = {
        "id": f"chatcmpl-scripted-{request_no}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_NAME,
        "system_fingerprint": None,
    }
    finish_reason = "stop" if isinstance(reply, TextReply) else "tool_calls"
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
        for delta in _deltas(reply, request_no, dialect)
    ]
    chunks.append(
        {**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish_reason}]}
    )
    if dialect.usage and (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": _usage(body, reply)})
    for position, chunk in enumerate(chunks):
        if delay_ms and position:
            await asyncio.sleep(delay_ms / 1000)
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
    refusal = _refusal(state.dialect, body)
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
    return JSONResponse(_completion_json(body, reply, request_no, state.dialect))


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
    "Event loop is closed" (or pass ``http_async_client`` to ``ChatOpenAI``).

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
        self._server = make_server(self.app, self.host, self.port)
        # uvicorn skips signal handlers outside the main thread, so run() is safe here.
        self._thread = threading.Thread(target=self._server.run, name="scripted-llm", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"scripted LLM server failed to start on {self.host}:{self.port}")
            time.sleep(0.01)
        self.port = bound_port(self._server)
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
