"""Model and tools (spec 002 "模型与工具"): what the agent runs on, and the operator's two switches.

``GET /api/model`` and ``GET /api/model/tools`` describe the assembled agent;
``POST /api/model/thinking`` and ``POST /api/model/reload`` rebuild it. Both rebuilds
leave runs in flight alone: a run keeps the agent it was admitted with, the next run gets the
new one (:mod:`ventapp.agent.agent_set`). The two ``POST`` routes are operator actions behind
:data:`~ventapp.api.deps.Operator`, the one place a role check goes when authentication arrives.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ventapp.agent.agent_set import AgentSet, UnknownRoute
from ventapp.agent.assembly import model_summary, tool_groups, tool_names
from ventapp.agent.pipeline import ChatRejected
from ventapp.agent.prefixes import known_skills
from ventapp.agent.refusals import rejected, unknown_route
from ventapp.agent.thinking import UnknownLevel, levels_for
from ventapp.api.deps import CurrentUser, Operator, RuntimeDep
from ventapp.api.openapi import errors

router = APIRouter(prefix="/api/model", tags=["model"])
logger = logging.getLogger(__name__)

RouteName = Annotated[
    str | None, Query(max_length=64, description="A model route by name (MODELS); default: the main one")
]


def _route(agents: AgentSet, name: str | None) -> str:
    try:
        return agents.route(name).name
    except UnknownRoute as unknown:
        raise unknown_route(unknown.name, unknown.names) from None


@router.get("", responses=errors())
async def get_model(runtime: RuntimeDep, user_name: CurrentUser, model: RouteName = None) -> dict[str, Any]:
    """The route's provider, model, endpoint (never the key), context window and its source, thinking
    level and levels on offer; every route (``routes``, each ``priced`` or not); the assembled agent
    (``agent``: tools, sub-agents, skills, middleware in order); and what a turn of ``user_name`` is
    given (``turn``: preferences present or not, approval rules, the current time). 400
    ``unknown_model`` lists the configured routes."""
    return await model_summary(runtime, user_name, _route(runtime.agents, model))


@router.get("/tools", responses=errors())
async def get_tools(runtime: RuntimeDep, user_name: CurrentUser, model: RouteName = None) -> dict[str, Any]:
    """The agent's tools by group: ``{route, groups: [{group, tools: [{name, label, summary,
    requires_approval, rememberable}]}]}``; an MCP server's tools form the group ``MCP: <server>``
    (with ``mcp_server``), named ``<server>__<tool>``."""
    del user_name  # identity is resolved (and checked) like on every route
    built = await runtime.agents.ready(_route(runtime.agents, model))
    return {"route": built.route.name, "groups": tool_groups(runtime, built)}


class ThinkingSwitch(BaseModel):
    """Body of ``POST /api/model/thinking``."""

    level: str = Field(
        min_length=1, max_length=32, description="A level the route offers, e.g. off|low|medium|high"
    )
    model: str | None = Field(default=None, max_length=64, description="The route; default: the main one")


@router.post("/thinking", responses=errors(state_changing=True))
async def switch_thinking(body: ThinkingSwitch, runtime: RuntimeDep, operator: Operator) -> dict[str, Any]:
    """Switch a route's thinking level and rebuild its agent (operator action).

    Runs in flight finish on the agent they started with; the next run uses the new level.
    Answers ``{route, level, levels, model, generation}`` (``model``: the name calls are now sent
    and priced under, e.g. ``deepseek-reasoner``). 422 ``unknown_level`` (``levels`` lists the
    route's), 400 ``unknown_model``.
    """
    name = _route(runtime.agents, body.model)
    try:
        built = await runtime.agents.set_thinking(name, body.level)
    except UnknownLevel as unknown:
        raise rejected(
            422, "unknown_level", UnknownLevel.KEY, details={"levels": list(unknown.levels)}, **unknown.params
        ) from None
    logger.info("thinking level of %s set to %s by %s", name, built.thinking, operator)
    return {
        "route": name,
        "level": built.thinking,
        "levels": list(levels_for(built.route)),
        "model": built.model,
        "generation": built.generation,
    }


@router.post("/reload", responses=errors(500, state_changing=True))
async def reload_agent(runtime: RuntimeDep, operator: Operator) -> dict[str, Any]:
    """Rebuild the agents: re-read the tool modules, ``MCP_SERVERS`` and the skills (operator action).

    Runs in flight finish on their agent; each session's next turn reads the skills again; the
    MCP servers are listed again (one that is down is left out, as at start). Answers
    ``{generation, routes, rebuilt, tools, skills}``: ``routes`` every configured route (``MODELS``),
    ``rebuilt`` those whose agent was built already and is rebuilt now (a route's agent is built
    on its first run, so one never run, e.g. an unpriced route refused with 503, is built then,
    with the new tools). 500 ``reload_failed`` when a tool module, the
    ``MCP_SERVERS`` setting (or a tool name clash) or the assembly fails: the agents in use are kept.
    """
    try:
        rebuilt = await runtime.agents.reload()
    except Exception as exc:
        logger.exception("reload requested by %s failed", operator)
        # A setting's ValueError is a sentence naming the key to fix (ventapp.config and the
        # parsers it calls), and only operators reach this route: show it. Anything else stays
        # in the log.
        detail = f": {exc}" if isinstance(exc, ValueError) else f" ({type(exc).__name__})"
        raise ChatRejected(
            500,
            "reload_failed",
            f"The agent could not be rebuilt{detail}. The agents in use are kept; the server log "
            "has the details.",
        ) from None
    logger.info("agents reloaded by %s (generation %d)", operator, runtime.agents.generation)
    return {
        "generation": runtime.agents.generation,
        "routes": list(runtime.agents.names),
        "rebuilt": [built.route.name for built in rebuilt],
        "tools": tool_names(rebuilt[0], runtime.settings.tools_profile),
        "skills": known_skills(),
    }
