"""The compiled agents, one per model route, and how they are rebuilt while runs go on.

A run takes a :class:`BuiltAgent` when it is admitted and keeps it to its end
(:class:`~ventapp.agent.chat_run.ChatRun`); switching the thinking level
(``POST /api/model/thinking``) or reloading tools and skills (``POST /api/model/reload``)
builds new agents and swaps them in, so runs in flight finish on the agent they started
with and the next run gets the new one. Every agent shares the runtime's checkpointer,
so graph state (thread = session) is the same whichever agent reads it.

MCP tool servers (``MCP_SERVERS``, :class:`~ventapp.tools.mcp_hub.McpHub`) are listed before
the first build (a name clash fails the start; a server that is down is left out); a down
server is listed again at the first run after ``MCP_RETRY_S``, and the agents are rebuilt when
its tools came (or went); a reload reads ``MCP_SERVERS`` again.

Skills: each built agent reads the skills' front matter once and gives it to every model call
(:class:`~ventapp.agent.skills_middleware.UnpinnedSkillsMiddleware`), so a reload reaches every
session at its next model call.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ventapp.agent.agent_factory import build_agent
from ventapp.agent.model_factory import build_model
from ventapp.agent.thinking import billed_model, check_level, check_routes
from ventapp.config import Settings, load_settings
from ventapp.model_config import DEFAULT_ROUTE, ModelRoute
from ventapp.tools import registry
from ventapp.tools.mcp_hub import McpHub

logger = logging.getLogger(__name__)


class UnknownRoute(ValueError):
    """A model route name that is not configured; ``names`` lists the configured ones."""

    def __init__(self, name: str, names: list[str]) -> None:
        super().__init__(f"There is no model route {name!r}. Configured routes: {', '.join(names)}.")
        self.name = name
        self.names = names


@dataclass(frozen=True)
class BuiltAgent:
    """One compiled agent and what it was built from.

    Attributes:
        graph: The compiled deep agent (``astream``, ``aget_state``).
        route: The model route it calls.
        thinking: The thinking level it was built with.
        model: The model name its calls are sent and priced under (``deepseek-reasoner`` …).
        generation: Counts reloads; agents of an older generation predate the last one.
        built_at: When it was built (UTC).
    """

    graph: Any
    route: ModelRoute
    thinking: str
    model: str
    generation: int
    built_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class AgentSet:
    """The agents of every route, built on first use and rebuilt on demand.

    Args:
        settings: Routes, tools profile, ``HITL_TOOLS``, ``CTX_COMPACT_ENABLED``, workspaces.
        checkpointer: Shared by every agent.

    Raises:
        ValueError: A route's starting thinking level is not one it offers.
    """

    def __init__(self, settings: Settings, checkpointer: Any) -> None:
        check_routes(settings.routes)
        self.settings = settings
        self.checkpointer = checkpointer
        self.generation = 0
        self.levels: dict[str, str] = {route.name: route.thinking_level for route in settings.routes}
        """route name -> the thinking level the next agent of that route is built with."""
        self._built: dict[str, BuiltAgent] = {}
        self._lock = asyncio.Lock()
        self.mcp = self._hub(settings)
        """The MCP servers of the current configuration and their state."""
        self._retry: asyncio.Task[None] | None = None

    @staticmethod
    def _hub(settings: Settings) -> McpHub:
        mcp = settings.mcp
        return McpHub(mcp.servers, settings.data_dir / "mcp", mcp.output_max_chars, mcp.retry_s)

    def _tools_ready(self) -> None:
        # Blocking: lists the servers (each within its timeout). Always installs, even with no
        # servers: the registry is process-wide and may hold another configuration's tools.
        if not self.mcp.loaded:
            self.mcp.load(strict=True)
            self.mcp.install(strict=True)

    @property
    def names(self) -> list[str]:
        """Route names, the main one first."""
        return [route.name for route in self.settings.routes]

    def route(self, name: str | None) -> ModelRoute:
        """The route called ``name`` (None or ``""``: the main one).

        Raises:
            UnknownRoute: No such route is configured.
        """
        route = self.settings.route(name)
        if route is None:
            raise UnknownRoute(str(name), self.names)
        return route

    def billed_model(self, name: str | None = None) -> str:
        """The model name the route's next run is sent and priced under (its thinking level decides)."""
        route = self.route(name)
        return billed_model(route, self.levels[route.name])

    def _build(self, route: ModelRoute, thinking: str, generation: int) -> BuiltAgent:
        settings = self.settings
        graph = build_agent(
            build_model(settings, route, thinking),
            self.checkpointer,
            workspaces_dir=settings.workspaces_dir,
            hitl_tools=self.hitl_tools(),
            compaction_enabled=settings.compaction_enabled,
            tools_profile=settings.tools_profile,
        )
        return BuiltAgent(graph, route, thinking, billed_model(route, thinking), generation)

    def hitl_tools(self) -> tuple[str, ...]:
        """``HITL_TOOLS`` without the tools of MCP servers that are down (not there to approve)."""
        # HITL_TOOLS may name an MCP server's tool; while that server is down the tool is not
        # there, and that must not fail the build (the app starts without the server).
        servers = set(self.mcp.servers)
        return tuple(
            name
            for name in self.settings.hitl_tools
            if registry.get_spec(name) is not None
            or name.split("__", 1)[0] not in servers
            or "__" not in name
        )

    def get(self, name: str | None = None) -> BuiltAgent:
        """The current agent of a route, built now (blocking, ~0.5 s) if it never was.

        Raises:
            UnknownRoute: No such route.
            ValueError: The agent cannot be assembled (a bad ``HITL_TOOLS``, …).
        """
        route = self.route(name)
        built = self._built.get(route.name)
        if built is None:
            self._tools_ready()
            built = self._built[route.name] = self._build(route, self.levels[route.name], self.generation)
        return built

    async def ready(self, name: str | None = None) -> BuiltAgent:
        """Like :meth:`get`, but a first build runs in a worker thread, not on the event loop.

        Also starts listing the MCP servers that are down again once ``MCP_RETRY_S`` has passed,
        in the background (a server that does not answer never delays a run); the agents are
        rebuilt when their tools changed, for the runs after.
        """
        route = self.route(name)
        if self.mcp.loaded and self.mcp.retry_due() and (self._retry is None or self._retry.done()):
            self._retry = asyncio.create_task(self._retry_mcp(), name="mcp-retry")
        if route.name in self._built:
            return self._built[route.name]
        async with self._lock:
            if route.name not in self._built:
                level, generation = self.levels[route.name], self.generation
                await asyncio.to_thread(self._tools_ready)
                self._built[route.name] = await asyncio.to_thread(self._build, route, level, generation)
            return self._built[route.name]

    async def _retry_mcp(self) -> None:
        hub = self.mcp
        try:  # outside the lock: a server that does not answer holds up no build, switch or reload
            changed = await asyncio.to_thread(hub.load, hub.down())
        except Exception:  # never raised out of a background task: the next run tries again
            logger.exception("listing the MCP servers that were down failed")
            return
        if not changed:
            return
        async with self._lock:
            if hub is not self.mcp:  # a reload replaced the configuration meanwhile
                return
            hub.install()
            names = [built.route.name for built in self.built()]

            def rebuild() -> list[BuiltAgent]:
                return [self._build(self.route(n), self.levels[n], self.generation) for n in names]

            try:
                fresh = await asyncio.to_thread(rebuild)
            except Exception:  # the agents in use stay; a reload reports what is wrong
                logger.exception("rebuilding the agents with the MCP servers' new tools failed")
                return
            self._built = {built.route.name: built for built in fresh}
        logger.info("MCP tools changed: agents rebuilt (%s)", ", ".join(names) or "none built yet")

    def built(self) -> list[BuiltAgent]:
        """The agents built so far, in route order."""
        return [self._built[name] for name in self.names if name in self._built]

    async def set_thinking(self, name: str | None, level: str) -> BuiltAgent:
        """Switch a route's thinking level and rebuild its agent (runs in flight keep theirs).

        Raises:
            UnknownRoute: No such route.
            ventapp.agent.thinking.UnknownLevel: The route does not offer ``level``.
        """
        route = self.route(name)
        level = check_level(route, level)
        async with self._lock:
            built = await asyncio.to_thread(self._build, route, level, self.generation)
            self.levels[route.name] = level
            self._built[route.name] = built
        logger.info("model route %s: thinking level %s (model %s)", route.name, level, built.model)
        return built

    async def reload(self) -> list[BuiltAgent]:
        """Re-read the tool modules, ``MCP_SERVERS`` and the skills; rebuild every agent built so far
        (at least the main one).

        Raises:
            ValueError | ImportError: A tool module no longer loads, ``MCP_SERVERS`` is invalid or
                two tools clash, or the agent no longer assembles; the agents in use are kept
                (the registry then holds the new tools until the next reload).
        """
        async with self._lock:
            hub = self._hub(load_settings())
            await asyncio.to_thread(hub.load, strict=True)
            # On the loop's thread: the registry is briefly empty while its modules re-run, and
            # nothing else may look a tool up in between.
            registry.load_builtin_tools(reload=True)
            try:
                hub.install(strict=True)
            except ValueError:
                self.mcp.install()  # the agents in use keep their tools; so does the registry
                raise
            old, self.mcp = self.mcp, hub
            generation = self.generation + 1
            names = [built.route.name for built in self.built()] or [DEFAULT_ROUTE]

            def rebuild() -> list[BuiltAgent]:
                return [self._build(self.route(n), self.levels[n], generation) for n in names]

            fresh = await asyncio.to_thread(rebuild)
            self._built = {built.route.name: built for built in fresh}
            self.generation = generation
        # The old configuration's long-lived sessions end (a call still running on an old agent
        # would open a fresh one).
        await old.aclose()
        logger.info("agents rebuilt (generation %d): %s", generation, ", ".join(names))
        return fresh
