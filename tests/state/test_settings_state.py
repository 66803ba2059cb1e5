"""The settings page's model facts: MCP servers listed by server with their state (issue 16)."""

from __future__ import annotations

from ventapp.state.settings_state import mcp_view

_SERVERS = {
    "site": {"status": "up", "reason": "", "tools": ["site__read_airflow", "site__set_fan_speed"]},
    "gone": {"status": "down", "reason": "Its tools could not be listed: connection refused.", "tools": []},
    "old": {"status": "disabled", "reason": "", "tools": []},
}


def test_each_server_is_listed_with_its_state_and_tools_in_both_languages() -> None:
    assert mcp_view(_SERVERS, "en") == (
        "site: connected, site__read_airflow, site__set_fan_speed; "
        "gone: unavailable (Its tools could not be listed: connection refused); old: switched off"
    )
    assert mcp_view(_SERVERS, "zh-CN").startswith("site：已连接，site__read_airflow")
    assert "gone：不可用（" in mcp_view(_SERVERS, "zh-CN")


def test_no_servers_says_how_to_configure_them() -> None:
    assert mcp_view({}, "en") == "none configured (MCP_SERVERS)"
