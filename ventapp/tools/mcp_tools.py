"""One MCP server tool as an agent tool: the call, its failures and its result, shaped for the model.

The connection and the protocol are the adapters' (``langchain_mcp_adapters.sessions.create_session``
on the official ``mcp`` SDK); this module adds what the agent needs around a call:

* a fresh session per call, so a server that died is simply started (stdio) or reached (HTTP)
  again by the next call: reconnection needs no restart (``keep_alive`` servers reuse one
  :class:`~ventapp.tools.mcp_session.LiveSession` instead, replaced after a failed call);
* a call that is cancelled (Stop, a timeout) returns at once; its session, and a stdio server
  busy in the call, end in the background (:func:`~ventapp.tools.mcp_session.in_background`),
  awaited when the hub closes;
* a stdio server runs in the calling session's workspace folder when its entry says
  ``workspace: true``, otherwise in a folder of its own (``DATA_DIR/mcp/<server>``), never the
  host's root or the app's checkout;
* every failure (server down, died mid-call, timed out, an error result) becomes a
  :class:`~langchain_core.tools.ToolException` with a readable sentence, so the model gets a
  ``ToolMessage`` with ``status="error"`` and the run goes on;
* the result becomes text (non-text content is named, not sent), at most ``max_chars`` long;
  a result shaped like :func:`~ventapp.tools.registry.sourced` (``{"data", "sources"}``, as
  text or structured content) keeps that shape, so its sources become citations.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import StructuredTool, ToolException

from ventapp.mcp_config import McpServer
from ventapp.tools import workspace_files
from ventapp.tools.mcp_session import LiveSession, in_background
from ventapp.tools.registry import parse_sourced

if TYPE_CHECKING:
    from mcp.types import CallToolResult

try:  # LangGraph control-flow signals (interrupt(), Command) must reach the graph untouched.
    from langgraph.errors import GraphBubbleUp as _PassThrough
except ImportError:  # pragma: no cover - langgraph is a runtime dependency
    _PassThrough = ()  # type: ignore[assignment]

MODULE_PREFIX = "mcp:"
"""``ToolSpec.module`` of every MCP tool is ``mcp:<server>``."""
SEPARATOR = "__"
_INVALID = re.compile(r"[^A-Za-z0-9_-]")

Reporter = Callable[[str, str | None], None]
"""``report(server, reason)``: reason None after a call that reached the server, else why it did not."""


def agent_tool_name(server: str, mcp_name: str) -> str:
    """The name the model calls an MCP tool by: ``<server>__<tool>``, other characters as ``_``, 64 at most."""
    return f"{server}{SEPARATOR}{_INVALID.sub('_', mcp_name)}"[:64]


def connection(server: McpServer, cwd: Path | None) -> dict[str, Any]:
    """The adapters' connection settings of ``server`` (a stdio process runs in ``cwd``)."""
    if server.transport == "stdio":
        return {
            "transport": "stdio",
            "command": server.command,
            "args": list(server.args),
            "env": server.env,
            "cwd": str(cwd) if cwd is not None else None,
        }
    return {
        "transport": "streamable_http",
        "url": server.url,
        "headers": dict(server.headers),
        "timeout": server.timeout,
        "sse_read_timeout": server.timeout,
    }


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def failure_reason(exc: BaseException, timeout: float) -> str:
    """A short reason for a failed connection or call, e.g. ``"connection closed"`` (never a host path)."""
    leaf = _leaves(exc)[0]
    if isinstance(leaf, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(leaf, FileNotFoundError | PermissionError):
        return "its command could not be started"
    name = type(leaf).__name__
    if name in ("ConnectError", "ConnectTimeout") or isinstance(leaf, ConnectionError):
        return "connection refused"
    if name == "McpError":
        return (str(leaf).strip() or "protocol error")[:200].rstrip(".").lower()
    if name.startswith(("Remote", "Read", "Write", "HTTPStatus")) or isinstance(leaf, EOFError | OSError):
        return "the connection broke off"
    return f"unexpected {name}"


def _text_of(block: Any) -> str:
    # By the protocol's type tags, not the SDK's classes: this module imports no MCP code until a
    # call (the SDK costs over a second of start-up, which an app without MCP servers skips).
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind == "resource" and isinstance(getattr(block.resource, "text", None), str):
        return block.resource.text
    kind = getattr(block, "mimeType", None) or getattr(block, "type", "content")
    return f"[{kind} content, not shown]"


def shape_result(result: CallToolResult, name: str, max_chars: int) -> str:
    """The text the model gets for an MCP call result.

    Args:
        result: The server's answer.
        name: The agent's tool name (for messages).
        max_chars: Longest text passed on; longer text is cut with a note saying so.

    Returns:
        The text blocks joined by newlines; sourced structured content as ``{"data", "sources"}`` JSON.

    Raises:
        ToolException: The server reported an error (``isError``); the message carries its text.
    """
    text = "\n".join(_text_of(block) for block in result.content)
    if result.isError:
        detail = (text.strip() or "no reason given")[:500]
        raise ToolException(f"Tool '{name}' failed: the MCP server answered with an error: {detail}")
    structured = result.structuredContent
    if isinstance(structured, dict) and "sources" in structured and not parse_sourced(text):
        text = json.dumps({"data": structured.get("data"), **structured}, ensure_ascii=False, default=str)
    if len(text) > max_chars:
        text = (
            text[:max_chars]
            + f"\n[cut: the result had {len(text):,} characters; the first {max_chars:,} are shown "
            "(MCP_OUTPUT_MAX_CHARS)]"
        )
    return text


async def _session_call(
    conn: dict[str, Any], mcp_name: str, arguments: dict[str, Any]
) -> tuple[CallToolResult | None, BaseException | None]:
    from langchain_mcp_adapters.sessions import create_session

    captured: BaseException | None = None
    result: CallToolResult | None = None
    async with create_session(conn) as session:  # type: ignore[arg-type]
        await session.initialize()
        try:
            result = await session.call_tool(mcp_name, arguments)
        except Exception as exc:  # kept: the session's exit may swallow it
            captured = exc
    return result, captured


async def _fresh_call(
    conn: dict[str, Any], mcp_name: str, arguments: dict[str, Any]
) -> tuple[CallToolResult | None, BaseException | None]:
    """Call ``mcp_name`` on a session of its own: ``(result, None)`` or ``(None, the call's error)``.

    The session lives in a task of its own, so that a caller cancelled mid-call (Stop, a
    timeout) returns at once while the session ends in the background: ending a stdio session
    waits for its server to exit, seconds for one busy in a blocking tool (see
    :mod:`~ventapp.tools.mcp_session`).
    """
    task = asyncio.get_running_loop().create_task(_session_call(conn, mcp_name, arguments), name="mcp-call")
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        # Only now tracked: a reload's wait_closed must not wait for (or kill) calls still running.
        task.cancel()
        in_background(task)
        raise


def _call_folder(server: McpServer, home: Path) -> Path | None:
    if server.transport != "stdio":
        return None
    if server.workspace:
        return workspace_files.workspace_root()
    home.mkdir(parents=True, exist_ok=True)
    return home


def build_tool(
    server: McpServer,
    mcp_name: str,
    description: str,
    schema: dict[str, Any],
    *,
    home: Path,
    max_chars: int,
    report: Reporter,
    live: LiveSession | None = None,
) -> StructuredTool:
    """The agent tool that calls ``mcp_name`` on ``server``, one session per call (or ``live``'s).

    Args:
        server: The server entry.
        mcp_name: The tool's name on the server.
        description: What the model reads (the server's description).
        schema: The tool's JSON Schema of arguments (``inputSchema``).
        home: The stdio server's own folder when it does not run in the session's workspace.
        max_chars: ``MCP_OUTPUT_MAX_CHARS``.
        report: Told whether each call reached the server (``/health`` shows it).
        live: The server's long-lived session (``keep_alive``); None opens one per call.

    Returns:
        An async-only ``StructuredTool`` named :func:`agent_tool_name`, failing into error ToolMessages.
    """
    name = agent_tool_name(server.name, mcp_name)

    async def call(**arguments: Any) -> str:
        try:
            conn = connection(server, _call_folder(server, home)) if live is None else {}
        except ValueError as exc:  # no session workspace outside a run
            raise ToolException(f"Tool '{name}' failed: {exc}.") from exc
        captured: BaseException | None = None
        result: CallToolResult | None = None
        try:
            async with asyncio.timeout(server.timeout):
                if live is not None:
                    result = await live.call(mcp_name, arguments)
                else:
                    result, captured = await _fresh_call(conn, mcp_name, arguments)
        except _PassThrough:
            raise
        except Exception as exc:  # a session that fails to close after the answer still answered
            captured = captured or exc
        if result is None:
            reason = failure_reason(captured or EOFError(), server.timeout)
            report(server.name, reason)
            raise ToolException(
                f"Tool '{name}' failed: the MCP server '{server.name}' could not be reached or stopped "
                f"answering ({reason}). Other tools still work; the server is tried again on the next call."
            )
        report(server.name, None)
        return shape_result(result, name, max_chars)

    return StructuredTool(
        name=name,
        description=description.strip() or f"Tool {mcp_name} of the MCP server {server.name}.",
        args_schema=schema,
        coroutine=call,
        handle_tool_error=True,
        metadata={"mcp_server": server.name, "mcp_tool": mcp_name},
    )
