"""The configured MCP servers (``MCP_SERVERS``): their tools in the registry and their state.

:class:`McpHub` lists each enabled server's tools (the adapters' ``load_mcp_tools``), keeps
the allowed ones, wraps them as agent tools (:func:`~ventapp.tools.mcp_tools.build_tool`) and
registers them beside ours as ``<server>__<tool>`` in the group ``MCP: <server>``, with
``requires_approval`` for the server's ``approval`` list. A server that cannot be listed is
``down`` (with the reason) and its tools are left out; every later call of a server's tool
reports whether the server answered, and :meth:`McpHub.retry_due` says when a down server
should be listed again (the agent layer does so at the next run and rebuilds the agents if
its tools changed).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ventapp.mcp_config import McpServer
from ventapp.tools import registry
from ventapp.tools.mcp_session import LiveSession, wait_closed
from ventapp.tools.mcp_tools import MODULE_PREFIX, agent_tool_name, build_tool, connection, failure_reason
from ventapp.tools.registry import ToolSpec

logger = logging.getLogger(__name__)
T = TypeVar("T")


class McpClash(ValueError):
    """Two tools would reach the model under one name; the message names both."""


@dataclass
class ServerState:
    """What is known about one server.

    Attributes:
        status: ``up`` (listed, last call answered), ``down`` (not reachable; ``reason`` says why)
            or ``disabled`` (``enabled: false``).
        reason: A sentence for operators; empty when up.
        tools: The agent's names of the server's registered tools.
        notes: Allow-list or approval names the server does not offer.
        checked_at: ``time.monotonic()`` of the last listing or call.
    """

    status: str
    reason: str = ""
    tools: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked_at: float = 0.0

    def public(self, server: McpServer) -> dict[str, Any]:
        """``{transport, status, reason, tools, notes}`` (``/health``, ``GET /api/model``)."""
        return {
            "transport": server.transport,
            "status": self.status,
            "reason": self.reason,
            "tools": list(self.tools),
            "notes": list(self.notes),
        }


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to the end on a loop of its own in a worker thread (callable from any thread)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-load") as pool:
        return pool.submit(asyncio.run, coroutine).result()


class McpHub:
    """The MCP servers of one configuration.

    Args:
        servers: ``Settings.mcp.servers``.
        home: Parent of the stdio servers' own folders (``DATA_DIR/mcp``).
        max_chars: ``MCP_OUTPUT_MAX_CHARS``.
        retry_s: ``MCP_RETRY_S``: how long a down server is left alone.
    """

    def __init__(self, servers: tuple[McpServer, ...], home: Path, max_chars: int, retry_s: float) -> None:
        self.servers = {server.name: server for server in servers}
        self.home = home
        self.max_chars = max_chars
        self.retry_s = retry_s
        self.loaded = False
        self._lock = threading.Lock()
        self.states: dict[str, ServerState] = {
            server.name: ServerState(
                "down" if server.enabled else "disabled", "not listed yet" if server.enabled else ""
            )
            for server in servers
        }
        self._specs: dict[str, list[ToolSpec]] = {}
        self._live = {
            server.name: LiveSession(connection(server, home / server.name))
            for server in servers
            if server.keep_alive
        }
        """The long-lived sessions of the ``keep_alive`` servers (shared by their tools)."""

    def report(self, server: str, reason: str | None) -> None:
        """Record whether a call reached ``server`` (None) or why not."""
        with self._lock:
            state = self.states[server]
            state.checked_at = time.monotonic()
            if reason is None:
                state.status, state.reason = "up", ""
            else:
                state.status, state.reason = "down", f"The last call failed: {reason}."
                logger.warning("MCP server %s is down: %s", server, reason)

    async def _list(self, server: McpServer) -> list[ToolSpec]:
        folder = self.home / server.name
        if server.transport == "stdio":
            folder.mkdir(parents=True, exist_ok=True)
        # Imported here: the adapters' tools module loads the SDK's server side too (~1 s), which
        # an app without MCP servers never needs.
        from langchain_mcp_adapters.tools import load_mcp_tools

        async with asyncio.timeout(server.timeout):
            listed = await load_mcp_tools(None, connection=connection(server, folder))  # type: ignore[arg-type]
        offered = {tool.name: tool for tool in listed}
        wanted = [name for name in (server.tools or offered) if name in offered]
        notes = [f"tools: the server offers no {name!r}" for name in server.tools if name not in offered]
        notes += [
            f"approval: the server offers no {name!r}" for name in server.approval if name not in offered
        ]
        specs: dict[str, ToolSpec] = {}
        for mcp_name in wanted:
            tool = offered[mcp_name]
            name = agent_tool_name(server.name, mcp_name)
            if name in specs:
                raise McpClash(
                    f"MCP server {server.name!r} offers {specs[name].tool.metadata['mcp_tool']!r} and {mcp_name!r}, "
                    f"which both reach the model as {name!r}; leave one out with MCP_SERVERS.{server.name}.tools"
                )
            title = str((tool.metadata or {}).get("title") or mcp_name)
            first_line = (tool.description or "").strip().split("\n", 1)[0]
            summary = first_line[:200] or f"{mcp_name} ({server.name})"
            schema = (
                tool.args_schema
                if isinstance(tool.args_schema, dict)
                else {"type": "object", "properties": {}}
            )
            specs[name] = ToolSpec(
                name=name,
                group=f"MCP: {server.name}",
                label=title,
                label_en=title,
                summary=summary,
                requires_approval=mcp_name in server.approval,
                tool=build_tool(
                    server,
                    mcp_name,
                    tool.description or "",
                    schema,
                    home=folder,
                    max_chars=self.max_chars,
                    report=self.report,
                    live=self._live.get(server.name),
                ),
                module=f"{MODULE_PREFIX}{server.name}",
            )
        self.states[server.name].notes = notes
        return list(specs.values())

    async def _list_all(self, names: list[str]) -> dict[str, list[ToolSpec] | BaseException]:
        async def one(name: str) -> list[ToolSpec] | BaseException:
            try:
                return await self._list(self.servers[name])
            except McpClash as clash:
                return clash
            except Exception as exc:
                return exc

        results = await asyncio.gather(*(one(name) for name in names))
        return dict(zip(names, results, strict=True))

    def load(self, names: list[str] | None = None, *, strict: bool = False) -> bool:
        """List the tools of ``names`` (default: every enabled server); blocking, up to each server's timeout.

        Args:
            names: Servers to list again.
            strict: Raise on a name clash (start-up); otherwise the server is marked down with it.

        Returns:
            True when the set of listed tools changed (the agents need rebuilding).

        Raises:
            McpClash: With ``strict``, a server offers two tools that reach the model under one name.
        """
        names = [n for n in (self.servers if names is None else names) if self.servers[n].enabled]
        before = {name: [spec.name for spec in specs] for name, specs in self._specs.items()}
        results = run_async(self._list_all(names)) if names else {}
        now = time.monotonic()
        for name, result in results.items():
            state = self.states[name]
            state.checked_at = now
            if isinstance(result, McpClash) and strict:
                raise result
            if isinstance(result, BaseException):
                reason = (
                    str(result)
                    if isinstance(result, McpClash)
                    else failure_reason(result, self.servers[name].timeout)
                )
                server = self.servers[name]
                if server.command and reason == "connection closed":
                    # A stdio command that exits at once: most often a relative path, since it runs
                    # in a folder of its own, not in the project root.
                    reason += f" (its command ended at once; it runs in DATA_DIR/mcp/{name}, so give its paths as absolute paths)"
                state.status, state.reason, state.tools = (
                    "down",
                    f"Its tools could not be listed: {reason}.",
                    [],
                )
                self._specs.pop(name, None)
                logger.warning("MCP server %s is down (its tools are left out): %s", name, reason)
            else:
                state.status, state.reason = "up", ""
                state.tools = [spec.name for spec in result]
                self._specs[name] = result
                logger.info("MCP server %s: %d tool(s)", name, len(result))
        self.loaded = True
        return before != {name: [spec.name for spec in specs] for name, specs in self._specs.items()}

    def install(self, *, strict: bool = False) -> None:
        """Put the listed servers' tools into the registry in place of any MCP tools there.

        Args:
            strict: Raise on a name clash (start-up, reload); otherwise the clashing server is
                marked down with the clash as its reason and left out.

        Raises:
            ValueError: With ``strict``, a tool's name is taken already (one of ours, or another
                server's); the message names both. No MCP tool is registered then.
        """
        registry.remove_specs(MODULE_PREFIX)
        if strict:
            registry.add_specs([spec for specs in self._specs.values() for spec in specs])
            return
        for name, specs in list(self._specs.items()):
            try:
                registry.add_specs(specs)
            except ValueError as clash:
                state = self.states[name]
                state.status, state.reason, state.tools = "down", str(clash), []
                del self._specs[name]

    async def aclose(self) -> None:
        """Close the long-lived sessions and wait for every session still ending on this loop.

        Their stdio processes end (those of stopped calls too, whichever hub's tools made them);
        a later call opens new sessions.
        """
        for live in self._live.values():
            live.close()
        await wait_closed()

    def retry_due(self) -> bool:
        """True when an enabled server is down and was last tried more than ``retry_s`` ago."""
        now = time.monotonic()
        return any(
            state.status == "down" and now - state.checked_at >= self.retry_s
            for state in self.states.values()
        )

    def down(self) -> list[str]:
        """Names of the enabled servers that are down."""
        return [name for name, state in self.states.items() if state.status == "down"]

    def public(self) -> dict[str, dict[str, Any]]:
        """Every server's :meth:`ServerState.public`, by name."""
        return {name: self.states[name].public(server) for name, server in self.servers.items()}
