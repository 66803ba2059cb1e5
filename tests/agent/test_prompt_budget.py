"""The fixed prompt (system prompt + tool schemas) measured as sent, and the lean tool profile (issue 19)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.tools import StructuredTool

from ventapp.agent.prompt_budget import FIXED_PROMPT_MAX_SHARE, check_fixed_prompt, measure_fixed_prompt
from ventapp.agent.tool_profiles import LEAN_TOOLS, first_line
from ventapp.config import Settings, load_settings
from ventapp.tools import registry
from ventapp.tools.mcp_tools import MODULE_PREFIX

pytestmark = [
    # A coroutine collected unawaited (the start-up measurement cancelled before its thread ran)
    # fails the test instead of showing as a warning at the end of the run.
    pytest.mark.filterwarnings("error:coroutine .* was never awaited:RuntimeWarning"),
    pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning"),
]


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


async def test_a_measurement_stopped_before_its_thread_ran_leaves_no_coroutine_behind() -> None:
    """A runtime closed just after start-up cancels the measurement while it still waits for a
    worker thread: nothing of it may be left to be collected as "never awaited" (a RuntimeWarning
    the test runs showed, and a coroutine object kept alive by the executor's queue)."""
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(max_workers=1)
    loop.set_default_executor(pool)
    go = threading.Event()
    occupied = loop.run_in_executor(None, go.wait)  # the one worker is busy: the measurement queues
    check = asyncio.create_task(check_fixed_prompt(_settings()))
    await asyncio.sleep(0.05)
    check.cancel()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.suppress(asyncio.CancelledError):
            await check
        go.set()
        await occupied
        pool.shutdown(wait=True)  # the worker drops the cancelled job (and what it held)
        gc.collect()
    assert check.cancelled()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


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
