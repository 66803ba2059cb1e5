"""The settings page's thinking switch, headless: it sets the route the page shows (the chat
header's choice by default, or the one picked there), and is disabled for non-operators, saying why.

The real Reflex event processor, a real runtime (SQLite, in-memory checkpointer) with a second
``MODELS`` route; nothing is sent to a model. Operators come from ``AUTH_NONE_OPERATORS``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from reflex_base.event.processor import BaseStateEventProcessor

from tests.headless import MODEL_NOWHERE, NOWHERE, HeadlessTab, headless_processor, page_env, served_runtime
from tests.support import patched_env
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import load_settings
from ventapp.state.model_state import ModelState
from ventapp.state.settings_state import SettingsState


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[AgentRuntime]:
    routes = [
        {
            "name": "reasoner",
            "model": "deepseek-chat",
            "base_url": NOWHERE,
            "api_key": "x",
            "thinking": "effort",
        }
    ]
    env = page_env(
        tmp_path,
        **MODEL_NOWHERE,
        MODELS=json.dumps(routes),
        THINKING_CONTROL="effort",
        AUTH_MODE="none",
        AUTH_NONE_OPERATORS="ops",
    )
    with patched_env(env):
        async with served_runtime(load_settings(env)) as opened:
            yield opened


class Tab(HeadlessTab[SettingsState]):
    page_state = SettingsState


async def _tab(processor: BaseStateEventProcessor, user: str) -> Tab:
    tab = Tab(processor)
    await tab.fire_on(ModelState, "refresh")
    (await tab.state()).user_name = user  # the browser's stored name
    return tab


@pytest.fixture
async def processor(runtime: AgentRuntime) -> AsyncIterator[BaseStateEventProcessor]:
    async with headless_processor() as running:
        yield running


async def test_the_page_shows_and_switches_the_route_chosen_in_the_chat(
    processor: BaseStateEventProcessor, runtime: AgentRuntime
) -> None:
    """Tester: with ``reasoner`` picked in the chat header, /settings showed (and switched) ``default``."""
    tab = await _tab(processor, "ops")
    await tab.fire_on(ModelState, "choose", route="reasoner")
    await tab.fire("load_page")
    state = await tab.state()
    assert (state.thinking_route, state.model.route) == ("reasoner", "reasoner")
    assert state.route_names == ["default", "reasoner"] and state.may_switch and state.switch_reason == ""

    await tab.fire("set_thinking", level="low")
    assert runtime.agents.levels["reasoner"] == "low" and runtime.agents.levels["default"] == "default"

    await tab.fire("pick_route", route="default")
    await tab.fire("set_thinking", level="high")
    assert runtime.agents.levels["default"] == "high" and runtime.agents.levels["reasoner"] == "low"

    await tab.fire("set_thinking", level="ultra")  # said in the page's language, not the English error
    assert (await tab.state()).thinking_note.startswith("模型路由“default”提供的思考级别为default, off")


async def test_a_user_sees_the_switch_disabled_and_why(processor: BaseStateEventProcessor) -> None:
    tab = await _tab(processor, "alice")
    await tab.fire("load_page")
    state = await tab.state()
    assert not state.may_switch and state.switch_reason.startswith("只有运维人员")
