"""What the agent is made of, as ``GET /api/model``, ``GET /api/model/tools`` and the settings page show it.

Read from the built agent where the graph says it (the tools its tool node holds) and from
the assembler otherwise (middleware order, sub-agents); nothing here changes anything.
Both clients call these functions (the API and the settings page), never each other.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from langchain_openai import ChatOpenAI

from ventapp.agent.agent_factory import middleware_stack, shown_tool_names, subagent_names
from ventapp.agent.agent_set import BuiltAgent
from ventapp.agent.endpoint_probe import public_url
from ventapp.agent.kernel import label_for
from ventapp.agent.model_factory import UNCONFIGURED_KEY
from ventapp.agent.prefixes import known_skills
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.thinking import levels_for, resolve_control
from ventapp.agent.turn_context import load_turn_context
from ventapp.billing.pricing import get_price
from ventapp.db.models import iso_utc
from ventapp.model_config import DEFAULT_ROUTE, ModelRoute
from ventapp.tools import registry
from ventapp.tools.mcp_tools import MODULE_PREFIX

FRAMEWORK_GROUP = "框架"
"""Group of deepagents' own tools (files, sub-agents) in ``/api/model/tools``."""


def provider_of(route: ModelRoute) -> str:
    """``openai``, ``deepseek``, ``qwen`` (DashScope), ``local`` (loopback) or the endpoint's host."""
    host = (urlsplit(route.base_url).hostname or "").lower() if route.base_url else "api.openai.com"
    if host == "api.openai.com":
        return "openai"
    if host.endswith("deepseek.com"):
        return "deepseek"
    if "dashscope" in host:
        return "qwen"
    if host in ("localhost", "127.0.0.1", "::1"):
        return "local"
    return host


def _registered_window(model: str) -> int | None:
    profile = ChatOpenAI(model=model, api_key=UNCONFIGURED_KEY).profile or {}
    window = profile.get("max_input_tokens")
    return int(window) if isinstance(window, int) else None


def tool_names(built: BuiltAgent, tools_profile: str) -> list[str]:
    """The tools the built agent shows the model under ``tools_profile``, in its tool node's order."""
    node = built.graph.nodes.get("tools")
    return shown_tool_names(
        list(getattr(getattr(node, "bound", None), "tools_by_name", {}) or {}), tools_profile
    )


def route_summary(runtime: AgentRuntime, route: ModelRoute) -> dict[str, Any]:
    """One route: name, provider, model, endpoint (never the key), window, thinking levels."""
    level = runtime.agents.levels[route.name]
    return {
        "name": route.name,
        "provider": provider_of(route),
        "model": runtime.agents.billed_model(route.name),
        "configured_model": route.model,
        "base_url": public_url(route.base_url),
        "configured": route.configured,
        "context_limit": route.context_limit,
        "context_source": "CONTEXT_LIMIT" if route.name == DEFAULT_ROUTE else "MODELS",
        "registered_context_limit": _registered_window(route.model),
        "thinking": {"control": resolve_control(route), "level": level, "levels": list(levels_for(route))},
    }


def agent_summary(runtime: AgentRuntime, built: BuiltAgent) -> dict[str, Any]:
    """The assembled agent: tools, sub-agents, skills and middleware names in order."""
    settings = runtime.settings
    tools = tool_names(built, settings.tools_profile)
    return {
        "tools": tools,
        "subagents": subagent_names() if "task" in tools else [],
        "skills": known_skills(),
        "middleware": middleware_stack(
            compaction_enabled=settings.compaction_enabled,
            tools_profile=settings.tools_profile,
            approvals=bool(registry.approval_required() or settings.hitl_tools),
        ),
        "tools_profile": settings.tools_profile,
        "mcp_servers": runtime.agents.mcp.public(),
        "thinking": built.thinking,
        "generation": built.generation,
        "built_at": iso_utc(built.built_at),
    }


async def model_summary(
    runtime: AgentRuntime, user_name: str, route_name: str | None = None
) -> dict[str, Any]:
    """``GET /api/model``: the route (default the main one), every route, the agent, and a turn's givens.

    Raises:
        ventapp.agent.agent_set.UnknownRoute: ``route_name`` is not configured.
    """
    route = runtime.agents.route(route_name)
    built = await runtime.agents.ready(route.name)
    summary = route_summary(runtime, route)
    routes = [route_summary(runtime, other) for other in runtime.settings.routes]
    prices = await asyncio.gather(
        *(asyncio.to_thread(get_price, runtime.engine, item["model"]) for item in routes)
    )
    for item, price in zip(routes, prices, strict=True):
        item["priced"] = price is not None or runtime.settings.billing_allow_unpriced
    turn = await asyncio.to_thread(load_turn_context, runtime.engine, user_name, "")
    return {
        **summary,
        "priced": next(item["priced"] for item in routes if item["name"] == route.name),
        "routes": routes,
        "agent": agent_summary(runtime, built),
        "turn": {
            "user_name": user_name,
            "preferences": bool(turn.preferences),
            "preferences_chars": len(turn.preferences),
            "approval_rules_always": len(turn.auto_approved),
            "current_time": "Asia/Shanghai, on every model call",
            "mode": "per session: full or plan",
        },
    }


def tool_groups(runtime: AgentRuntime, built: BuiltAgent) -> list[dict[str, Any]]:
    """``GET /api/model/tools``: the agent's tools by group, each with label, summary and approval.

    Returns:
        ``[{"group", "tools": [{name, label, summary, requires_approval, rememberable}]}]``,
        registry groups in registration order (an MCP server's tools as the group ``MCP: <server>``
        with ``mcp_server`` naming it), then deepagents' own tools under ``框架``.
    """
    available = tool_names(built, runtime.settings.tools_profile)
    hitl = set(runtime.settings.hitl_tools)
    groups: dict[str, list[dict[str, Any]]] = {}
    for spec in registry.all_specs():
        if spec.name not in available:
            continue
        groups.setdefault(spec.group, []).append(
            {
                "name": spec.name,
                "label": spec.label,
                "summary": spec.summary,
                "requires_approval": spec.requires_approval or spec.name in hitl,
                "rememberable": spec.rememberable,
            }
        )
    tools_by_name = built.graph.nodes["tools"].bound.tools_by_name
    for name in available:
        if registry.get_spec(name) is None:
            description = (getattr(tools_by_name[name], "description", "") or "").strip()
            groups.setdefault(FRAMEWORK_GROUP, []).append(
                {
                    "name": name,
                    "label": label_for(name),
                    "summary": description.split("\n", 1)[0][:200],
                    "requires_approval": name in hitl,
                    "rememberable": True,
                }
            )
    servers = {
        spec.group: spec.module.removeprefix(MODULE_PREFIX)
        for spec in registry.all_specs()
        if spec.module.startswith(MODULE_PREFIX)
    }
    return [
        {
            "group": group,
            **({"mcp_server": servers[group]} if group in servers else {}),
            "tools": tools,
        }
        for group, tools in groups.items()
    ]
