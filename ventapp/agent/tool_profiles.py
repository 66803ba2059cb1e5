"""Which tool schemas the model sees (``TOOLS_PROFILE``): ``full`` or ``lean`` for small context windows.

Every request carries the system prompt and every tool schema. With the full set that fixed
part is about 6,600 tokens (README, "Pointing it at a model"), more than a 4k-context local
model can hold before the conversation starts. ``lean`` shows the model eight tools with
one-line descriptions (about a quarter of the schema size): no sub-agent (``task``), no
search or edit tools over files; the main agent searches the knowledge base itself.

It is a middleware rather than deepagents' ``HarnessProfile(excluded_tools=...,
tool_description_overrides=...)`` on purpose: harness profiles live in a process-wide registry
keyed by model name and merge additively when re-registered, so a lean agent would leak its
exclusions into every later agent for the same model name (a test, a config reload).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.tools import BaseTool

from ventapp.config import TOOLS_PROFILES

__all__ = ["LEAN_TOOLS", "TOOLS_PROFILES", "LeanToolsMiddleware"]

LEAN_TOOLS: dict[str, str] = {
    "ls": "List the files in a directory.",
    "read_file": "Read a file. For a skill's SKILL.md pass limit=1000.",
    "write_file": "Create a file under /workspace/.",
    "current_time": "The current date and time.",
    "calculate": "Evaluate an arithmetic expression exactly (+ - * / ^ sqrt log …). Use for every sum.",
    "knowledge_search": "Search the ventilation knowledge base; cite what it returns.",
    "ask_user": "Ask the user one to three short questions and wait for the answers.",
    "request_plan_approval": "Submit a numbered plan and wait for the user's approval.",
}
"""The lean profile's tools and the one-line descriptions the model sees instead of the full ones."""


def _name(tool: BaseTool | dict[str, Any]) -> str:
    if isinstance(tool, dict):
        function = tool.get("function")
        return str((function or {}).get("name") if isinstance(function, dict) else tool.get("name"))
    return tool.name


def first_line(description: str, limit: int = 200) -> str:
    """The first line of a tool's description, cut to ``limit`` characters: what lean shows of it."""
    line = description.strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _description(tool: BaseTool | dict[str, Any]) -> str:
    if isinstance(tool, dict):
        function = tool.get("function")
        return str((function if isinstance(function, dict) else tool).get("description") or "")
    return tool.description


def _shortened(tool: BaseTool | dict[str, Any]) -> BaseTool | dict[str, Any]:
    name = _name(tool)
    description = LEAN_TOOLS[name] if name in LEAN_TOOLS else first_line(_description(tool))
    if isinstance(tool, dict):
        if isinstance(tool.get("function"), dict):
            return {**tool, "function": {**tool["function"], "description": description}}
        return {**tool, "description": description}
    return tool.model_copy(update={"description": description})


class LeanToolsMiddleware(AgentMiddleware):
    """Shows the model only :data:`LEAN_TOOLS` and the operator's MCP tools, each on one line.

    The MCP servers' tools (``MCP_SERVERS``) stay in view because an operator listed them on
    purpose (and can narrow each server with its ``tools`` allow-list); they keep the first line
    of their own description. The other tools stay registered (a call the model was never
    shown still runs under the same permissions); they are only left out of the request.

    Args:
        also_shown: Names of further tools to show, e.g. ``{"site__read_airflow"}``.
    """

    def __init__(self, also_shown: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self._shown = frozenset(LEAN_TOOLS) | also_shown

    def _lean(self, request: ModelRequest) -> ModelRequest:
        return request.override(
            tools=[_shortened(tool) for tool in request.tools if _name(tool) in self._shown]
        )

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        """Sync hook (``invoke``/``stream``)."""
        return handler(self._lean(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async hook (``ainvoke``/``astream``, the service's path; pitfall 4)."""
        return await handler(self._lean(request))
