"""The fixed prompt (system prompt + tool schemas) measured as sent, and the lean tool profile (issue 19)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from langchain_core.tools import StructuredTool

from ventapp.agent.prompt_budget import FIXED_PROMPT_MAX_SHARE, check_fixed_prompt, measure_fixed_prompt
from ventapp.agent.tool_profiles import LEAN_TOOLS, first_line
from ventapp.config import Settings, load_settings
from ventapp.tools import registry
from ventapp.tools.mcp_tools import MODULE_PREFIX


def _settings(**extra: str) -> Settings:
    return load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", **extra}
    )


async def test_full_profile_is_measured_as_sent() -> None:
    budget = await measure_fixed_prompt(_settings(CONTEXT_LIMIT="128000"))
    assert {"calculate", "knowledge_search", "task", "read_file", "grep"} <= set(budget.tools)
    assert 500 < budget.system_tokens < 2000 and 2500 < budget.tool_tokens < 6000
    assert budget.fits and budget.public()["fixed_tokens"] == budget.system_tokens + budget.tool_tokens


async def test_lean_profile_shows_fewer_shorter_schemas() -> None:
    full = await measure_fixed_prompt(_settings(CONTEXT_LIMIT="4096"))
    lean = await measure_fixed_prompt(_settings(CONTEXT_LIMIT="4096", TOOLS_PROFILE="lean"))
    assert set(lean.tools) == set(LEAN_TOOLS) and len(lean.tools) < len(full.tools)
    assert lean.tool_tokens * 3 < full.tool_tokens
    assert not full.fits and full.share > FIXED_PROMPT_MAX_SHARE, "the full set does not suit a 4k window"
    assert lean.fits, "the lean set leaves a 4k window room for a conversation"


async def test_a_prompt_that_does_not_fit_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ventapp.agent.prompt_budget"):
        budget = await check_fixed_prompt(_settings(CONTEXT_LIMIT="4096"))
    assert budget is not None and not budget.fits
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "CONTEXT_LIMIT=4096" in record.getMessage() and "TOOLS_PROFILE=lean" in record.getMessage()


def test_unknown_tools_profile_names_the_key() -> None:
    with pytest.raises(ValueError, match="TOOLS_PROFILE"):
        _settings(TOOLS_PROFILE="tiny")


@pytest.fixture
def site_mcp_tool() -> Iterator[str]:
    """One tool as an MCP server's tool is registered (``mcp:<server>``), with a long description."""

    def site__read_airflow(station: str) -> str:
        return station

    long = "Read the airflow (m³/s) at a monitoring station.\n\n" + "Details the model needs not see. " * 40
    spec = registry.ToolSpec(
        name="site__read_airflow",
        group="MCP: site",
        label="site__read_airflow",
        summary="",
        requires_approval=False,
        module=f"{MODULE_PREFIX}site",
        tool=StructuredTool.from_function(site__read_airflow, description=long),
    )
    registry.add_specs([spec])
    yield spec.name
    registry.remove_specs(MODULE_PREFIX)


async def test_lean_profile_keeps_the_operators_mcp_tools_on_one_line(site_mcp_tool: str) -> None:
    lean = await measure_fixed_prompt(_settings(CONTEXT_LIMIT="4096", TOOLS_PROFILE="lean"))
    assert set(lean.tools) == {*LEAN_TOOLS, site_mcp_tool}, "a listed MCP server's tool stays in view"
    registry.remove_specs(MODULE_PREFIX)
    without = await measure_fixed_prompt(_settings(CONTEXT_LIMIT="4096", TOOLS_PROFILE="lean"))
    assert 0 < lean.tool_tokens - without.tool_tokens < 80, "only its first line is shown"
    assert (
        first_line("a\nb") == "a"
        and first_line("x" * 300).endswith("…")
        and len(first_line("x" * 300)) == 200
    )
