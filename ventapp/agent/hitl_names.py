"""Which tools ``HITL_TOOLS`` may name, and its check before the server starts.

The agent's build checks the names against every tool it has (:func:`check_hitl_tools`); the
start checks them earlier (:func:`check_hitl_tools_at_start`, from ``rxconfig.py`` and
``ventapp.ui_build``), so that a name of no tool stops ``make run``/``make api`` with the other
settings' one-line errors, before Reflex's "App running at" banner rather than after it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ventapp.config import SettingError, Settings, exit_on_bad_setting
from ventapp.tools import registry

FRAMEWORK_TOOLS = (
    "write_todos",
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "delete",
    "glob",
    "grep",
    "task",
)
"""deepagents' own tools (not in our registry), which ``HITL_TOOLS`` may name too.

Only those the agent has: deepagents' ``execute`` is never among them, as it reaches the model only
with a backend that runs commands and ours never does (:func:`ventapp.agent.agent_factory.shown_tool_names`);
an approval for it could never be asked (tester: ``HITL_TOOLS=execute`` was accepted)."""


def check_hitl_tools(hitl_tools: Iterable[str], known: Iterable[str]) -> None:
    """Refuse ``HITL_TOOLS`` names that are not among ``known`` tool names.

    Raises:
        SettingError: Naming the key, the unknown names and the known ones.
    """
    known = set(known)
    unknown = sorted(set(hitl_tools) - known)
    if unknown:
        raise SettingError(f"HITL_TOOLS names unknown tools {unknown}; known: {', '.join(sorted(known))}")


def check_hitl_tools_at_start(settings: Settings) -> None:
    """Check ``HITL_TOOLS`` against the built-in and framework tools before the server starts.

    A name shaped like a configured MCP server's tool (``<server>__<tool>``) waits for the agent's
    build, which lists that server. Reads nothing (imports no tool module) when ``HITL_TOOLS`` is empty.

    Raises:
        SystemExit: 2, with one line naming the key (:func:`~ventapp.config.exit_on_bad_setting`).
    """
    if not settings.hitl_tools:
        return
    servers = {server.name for server in settings.mcp.servers}
    names = [
        name for name in settings.hitl_tools if name.split("__", 1)[0] not in servers or "__" not in name
    ]
    try:
        specs = registry.load_builtin_tools()
        check_hitl_tools(names, [*(spec.name for spec in specs), *FRAMEWORK_TOOLS])
    except SettingError as bad:
        exit_on_bad_setting(str(bad))
