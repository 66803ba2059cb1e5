"""Model control in the Reflex UI (issue 10), in a real browser against the whole app (prod build):
the reasoning block, the route picker, the settings page and the endpoint-down banner.

Two scripted servers: the main route (chunks 30 ms apart, so streaming can be watched;
``THINKING_CONTROL=effort``) and the ``second`` route of ``MODELS``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
USER = "model-e2e"
REASONING = " ".join(f"step{i}" for i in range(60))


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    with ScriptedServer(delay_ms=30) as server:
        yield server


@pytest.fixture(scope="module")
def second() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def app(
    llm: ScriptedServer, second: ScriptedServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-model")
    routes = [{"name": "second", "model": "scripted-demo", "base_url": second.base_url, "api_key": "x"}]
    env = {
        **app_env(data_dir, llm.base_url),
        "DEMO_MODE": "1",
        "HITL_TOOLS": "calculate",
        "THINKING_CONTROL": "effort",
        "MODELS": json.dumps(routes),
        "AUTH_NONE_OPERATORS": f"{USER},default",  # the thinking switch is an operator action
    }
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


@pytest.fixture
def page(browser: Browser, app: ReflexApp, llm: ScriptedServer, second: ScriptedServer) -> Iterator[Page]:
    llm.reset()
    second.reset()
    tab = open_chat(browser, app.url, USER, TIMEOUT_MS)
    yield tab
    tab.context.close()


def _send(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#send")


def test_reasoning_streams_in_a_collapsible_block_above_the_answer(page: Page, llm: ScriptedServer) -> None:
    llm.push({"content": "Final answer about fans.", "reasoning": REASONING})
    _send(page, "hello")
    live = page.locator(".msg-live .msg-reasoning")
    expect(live).to_contain_text("step3")
    assert live.evaluate("element => element.open") is True, "open while it streams"
    assert "step59" not in live.inner_text(), "the reasoning arrives piece by piece"
    done = page.locator(".msg-assistant[data-state='done']")
    expect(done).to_contain_text("Final answer about fans.")
    block = done.locator(".msg-reasoning")
    assert block.evaluate("element => element.open") is False, "a finished answer's reasoning is collapsed"
    block.locator("summary").click()
    expect(block).to_contain_text("step59")
    answer_box = done.get_by_text("Final answer about fans.").bounding_box()
    reasoning_box = block.bounding_box()
    assert answer_box is not None and reasoning_box is not None
    assert reasoning_box["y"] < answer_box["y"], "the reasoning sits above the answer"


def test_the_picker_runs_the_conversation_on_the_chosen_route(
    page: Page, llm: ScriptedServer, second: ScriptedServer
) -> None:
    picker = page.locator("#route-picker")
    expect(picker).to_contain_text("Default model")  # the main route by the catalogue's name
    picker.click()
    page.get_by_role("option", name="second").click()
    expect(picker).to_contain_text("second")
    _send(page, "hello second route")
    expect(page.locator(".msg-assistant[data-state='done']")).to_contain_text("You said: hello second route")
    assert len(second.requests()) == 1 and llm.requests() == []
    expect(page).to_have_url(re.compile(r"[?&]session="))
    page.reload()
    expect(page.locator("#route-picker")).to_contain_text("second")  # the session kept its route
    page.locator("#new-chat").click()
    expect(page.locator("#route-picker")).to_contain_text("Default model")


def _resume_with_rule(app: ReflexApp) -> None:
    """Create an 'always' approval rule for calculate the way a client does: approve with remember."""
    with httpx.Client(base_url=app.url, timeout=30) as http:
        frames: list[dict[str, Any]] = []
        with http.stream(
            "POST", "/api/chat", files={"message": (None, "please calculate 2+2"), "user_name": (None, USER)}
        ) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    frames.append(json.loads(line[6:]))
        interrupt = next(frame for frame in frames if frame["type"] == "interrupt")
        body = {
            "session_id": interrupt["session_id"],
            "user_name": USER,
            "interrupt_token": interrupt["interrupt_token"],
            "decisions": [{"type": "approve", "remember": "always"}],
        }
        with http.stream("POST", "/api/chat/resume", json=body) as resumed:
            assert resumed.status_code == 200
            resumed.read()


def test_settings_page_switches_thinking_and_keeps_preferences_and_rules(page: Page, app: ReflexApp) -> None:
    _resume_with_rule(app)
    page.locator("#settings-link").click()
    expect(page).to_have_url(re.compile(r"/settings$"))
    model = page.locator("#settings-model")
    expect(model).to_contain_text("scripted-demo")
    expect(model).to_contain_text("PreferencesMiddleware")

    page.locator("#thinking-select").click()
    page.get_by_role("option", name="High").click()
    expect(page.locator("#thinking-note")).to_contain_text("Thinking level set to High")
    with httpx.Client(base_url=app.url, timeout=30) as http:
        assert http.get("/api/model").json()["thinking"]["level"] == "high"
        http.post("/api/model/thinking", json={"level": "default"})

    page.locator("textarea[name='preferences']").fill("Airflow in m³/s, please.")
    page.locator("#preferences-save").click()
    expect(page.locator("#preferences-note")).to_be_visible()
    with httpx.Client(base_url=app.url, timeout=30) as http:
        saved = http.get("/api/preferences", params={"user_name": USER}).json()
        assert saved["preferences"] == "Airflow in m³/s, please."
        assert http.get("/api/model", params={"user_name": USER}).json()["turn"]["preferences"] is True

    row = page.locator("#rules-list .rule-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("calculate")
    row.locator(".rule-revoke").click()
    expect(page.locator("#rules-empty")).to_be_visible()
    with httpx.Client(base_url=app.url, timeout=30) as http:
        assert http.get("/api/approvals/rules", params={"user_name": USER}).json()["items"] == []


def test_banner_when_the_model_endpoint_is_down(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    """Last in this module: it stops the main model server."""
    tab = open_chat(browser, app.url, USER, TIMEOUT_MS)
    expect(tab.locator("#endpoint-banner")).to_have_count(0)
    llm.stop()
    time.sleep(5.5)  # the probe's answer is reused for 5 s
    tab.reload()
    expect(tab.locator("#endpoint-banner")).to_contain_text("not answering")
    assert httpx.get(f"{app.url}/health", timeout=30).status_code == 503
    tab.context.close()
