"""The settings page's model facts: MCP servers listed by server with their state (issue 16)."""

from __future__ import annotations

from ventapp.i18n import MESSAGES
from ventapp.pages.settings import THINKING_LEVELS
from ventapp.state.settings_state import mcp_view, model_view, preferences_too_long, thinking_label

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
    assert mcp_view(_SERVERS, "zh-CN").startswith("site：已连接，site__read_airflow、site__set_fan_speed；")
    assert "gone：不可用（" in mcp_view(_SERVERS, "zh-CN")


def test_ids_in_chinese_are_listed_with_the_enumeration_comma() -> None:
    """Tester (try17, F): the MCP tools and the sub-agent ids were joined with ", " in Chinese."""
    chinese = model_view(_SUMMARY, "zh-CN")
    assert chinese.subagent_ids == "general-purpose、researcher"
    assert chinese.tool_ids == "write_todos、read_file"
    assert "、" not in mcp_view(_SERVERS, "en") and "、" not in model_view(_SUMMARY, "en").subagent_ids


def test_no_servers_says_how_to_configure_them() -> None:
    assert mcp_view({}, "en") == "none configured (MCP_SERVERS)"


_SUMMARY = {
    "name": "default",
    "provider": "openai",
    "model": "m",
    "base_url": "http://127.0.0.1:1/v1",
    "context_limit": 128000,
    "context_source": "CONTEXT_LIMIT",
    "agent": {
        "tools": ["write_todos", "read_file"],
        "subagents": ["general-purpose", "researcher"],
        "skills": ["ventilation-calc", "ventilation-network-analysis"],
        "middleware": ["TodoListMiddleware"],
    },
}


def test_the_model_facts_name_tools_and_sub_agents_by_their_labels() -> None:
    """Tester: the model section listed raw ids (``general-purpose, researcher``) and ``128,000 tokens``."""
    chinese = model_view(_SUMMARY, "zh-CN")
    assert chinese.tools == "任务清单、读文件"
    assert chinese.subagents == "通用子智能体、资料检索员"
    assert chinese.skills == "ventilation-calc、ventilation-network-analysis", "Chinese lists with 、"
    assert chinese.route == "默认模型" and model_view(_SUMMARY, "en").route == "Default model"
    assert chinese.window.startswith("128,000 个 token") and "tokens" not in chinese.window
    english = model_view(_SUMMARY, "en")
    assert english.skills == "ventilation-calc, ventilation-network-analysis"
    assert english.tools == "Task list, Read file" and english.subagents.startswith(
        "General-purpose sub-agent"
    )


def test_thinking_levels_have_catalogue_labels() -> None:
    """Tester: the levels read ``default/off/low/medium/high`` and "思考级别已设为 high"."""
    assert [thinking_label(level) for level in THINKING_LEVELS] == ["默认", "关闭", "低", "中", "高", "开启"]
    assert thinking_label("high", "en") == "High"
    for level in THINKING_LEVELS:
        assert f"settings.thinking_level.{level}" in MESSAGES["zh-CN"], "the page compiles a label for each"


def test_too_long_preferences_write_the_numbers_as_the_help_does() -> None:
    """Tester: the help said ``4,000`` characters and the refusal ``4000``."""
    assert preferences_too_long("x" * 4000, "zh-CN") == ""
    refusal = preferences_too_long("x" * 4321, "zh-CN")
    assert "4,000" in refusal and "4,321" in refusal and "4000" not in refusal
    assert "4,000" in preferences_too_long("x" * 4001, "en")
