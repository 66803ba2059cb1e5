"""The chat header's model controls headless: the label names the chosen route's model, and an
unpriced route is offered marked, and cannot be chosen, while unpriced models are refused.

The real Reflex event processor, a real runtime (SQLite, in-memory checkpointer) with three
``MODELS`` routes; nothing is sent to a model (the endpoint probe finds nothing listening).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.headless import MODEL_NOWHERE, NOWHERE, HeadlessTab, headless_processor, page_env, served_runtime
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import load_settings
from ventapp.state.model_state import ModelState
from ventapp.state.settings_state import SettingsState


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[AgentRuntime]:
    routes = [
        {"name": "reasoner", "model": "deepseek-chat", "base_url": NOWHERE, "api_key": "x"},
        {"name": "nopriced", "model": "nobody-priced-this", "base_url": NOWHERE, "api_key": "x"},
    ]
    settings = load_settings(
        page_env(tmp_path, **MODEL_NOWHERE, MODELS=json.dumps(routes), BILLING_ALLOW_UNPRICED="0")
    )
    async with served_runtime(settings) as opened:
        yield opened


class Tab(HeadlessTab[ModelState]):
    page_state = ModelState


@pytest.fixture
async def tab(runtime: AgentRuntime) -> AsyncIterator[Tab]:
    async with headless_processor() as processor:
        opened = Tab(processor)
        await opened.fire("refresh")
        yield opened


async def test_the_header_names_the_chosen_routes_model(tab: Tab) -> None:
    """Tester: with route ``reasoner`` chosen the header still said ``scripted-demo``."""
    assert (await tab.state()).model_label == "scripted-demo"
    await tab.fire("choose", route="reasoner")
    state = await tab.state()
    assert state.route == "reasoner" and state.model_label == "deepseek-chat"


async def test_an_unpriced_route_is_marked_and_cannot_be_chosen(tab: Tab) -> None:
    """Tester: the picker offered an unpriced route with no warning (its runs are refused with 503)."""
    state = await tab.state()
    assert {option.name: option.unpriced for option in state.options} == {
        "default": False,
        "reasoner": False,
        "nopriced": True,
    }
    await tab.fire("choose", route="nopriced")
    assert (await tab.state()).route == "default"


async def test_the_settings_route_select_marks_an_unpriced_route_as_the_picker_does(
    runtime: AgentRuntime,
) -> None:
    """Tester: the settings page's route select offered the unpriced route unmarked (the picker marks
    it unavailable and says why): both list the same route options now."""

    class SettingsTab(HeadlessTab[SettingsState]):
        page_state = SettingsState

    async with headless_processor() as processor:
        tab = SettingsTab(processor)
        await tab.fire_on(ModelState, "refresh")
        (await tab.state()).user_name = "ann"  # the browser's stored name
        await tab.fire("load_page")
        state = await tab.state()
        picker = await tab.get(ModelState)
        assert {option.name: option.unpriced for option in state.route_options} == {
            "default": False,
            "reasoner": False,
            "nopriced": True,
        }
        assert state.route_options == picker.options
        await tab.fire("pick_route", route="nopriced")
        assert (await tab.state()).thinking_route == "default"
