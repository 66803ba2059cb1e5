"""The agent set and MCP servers (issue 16): a name clash fails the start, naming both tools."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_server import SERVER_FILE
from ventapp.agent.agent_set import AgentSet
from ventapp.config import load_settings
from ventapp.tools import registry
from ventapp.tools.mcp_tools import MODULE_PREFIX


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    yield
    registry.remove_specs(MODULE_PREFIX)


def _agents(tmp_path: Path, env: dict[str, str]) -> AgentSet:
    site = {"command": sys.executable, "args": [str(SERVER_FILE), "stdio"], "env": env, "tools": []}
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "DATA_DIR": str(tmp_path),
            "CHECKPOINTER": "memory",
            "MCP_SERVERS": json.dumps({"site": site}),
        },
        env_file=tmp_path / "none",
    )
    return AgentSet(settings, None)


def test_a_clash_fails_the_first_build_naming_both_tools(tmp_path: Path) -> None:
    agents = _agents(tmp_path, {"SITE_TOOLS_CLASH": "1"})
    with pytest.raises(
        ValueError, match=r"'read\.airflow' and 'read_airflow'|'read_airflow' and 'read\.airflow'"
    ):
        agents.get()
    assert not [s for s in registry.all_specs() if s.module.startswith(MODULE_PREFIX)], (
        "nothing half-registered"
    )


def test_the_first_build_lists_the_servers_and_the_agent_holds_their_tools(tmp_path: Path) -> None:
    agents = _agents(tmp_path, {})
    built = agents.get()
    tools = built.graph.nodes["tools"].bound.tools_by_name
    assert "site__read_airflow" in tools and "calculate" in tools
    assert agents.mcp.public()["site"]["status"] == "up"


def test_hitl_tools_may_name_a_tool_of_a_server_that_is_down(tmp_path: Path) -> None:
    from tests.mcp_server import free_port

    gone = {"url": f"http://127.0.0.1:{free_port()}/mcp", "timeout": 5}
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "DATA_DIR": str(tmp_path),
            "CHECKPOINTER": "memory",
            "MCP_SERVERS": json.dumps({"gone": gone}),
            "HITL_TOOLS": "gone__read_airflow",
        },
        env_file=tmp_path / "none",
    )
    agents = AgentSet(settings, None)
    assert agents.get().graph is not None, "the app starts without the server"
    assert agents.mcp.public()["gone"]["status"] == "down"
