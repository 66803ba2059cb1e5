"""Keyboard and screen-reader access: axe-core (bundled by axe-playwright-python, no network) finds no
serious or critical violation on any page, in both languages and both colour modes; a past
conversation opens with the keyboard alone; icon buttons have names; the answer's completion is
announced.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
PAGES = ("/", "/usage", "/schedules", "/settings", "/kb/fan-laws", "/no-such-page")
"""Every page of the UI (the chat with a finished answer, tool card and sources; the 404 page)."""
BLOCKING = ("serious", "critical")


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-a11y")
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1"}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


def _tab(browser: Browser, url: str, locale: str, scheme: Any, user: str) -> Page:
    tab = browser.new_context(
        locale=locale, color_scheme=scheme, viewport={"width": 1280, "height": 900}
    ).new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    tab.goto(url)
    tab.locator("#user-name").fill(user)
    tab.click("#user-name-save")
    expect(tab.locator("#user-chip")).to_contain_text(user)
    return tab


def _blocking(page: Page) -> list[str]:
    """Serious and critical axe violations on the page as it is now: ``rule: target …``."""
    results = Axe().run(page)
    found = []
    for violation in results.response["violations"]:
        if violation.get("impact") in BLOCKING:
            targets = [" ".join(map(str, node.get("target", []))) for node in violation["nodes"][:3]]
            found.append(f"{violation['id']} ({violation['impact']}): {'; '.join(targets)}")
    return found


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_no_serious_violation_on_any_page(browser: Browser, app: ReflexApp, locale: str, scheme: str) -> None:
    page = _tab(browser, app.url, locale, scheme, f"a11y-{locale}-{scheme}")
    page.fill("#chat-input", "please calculate (12+8)*3" if locale == "en-US" else "请计算 (12+8)*3")
    page.click("#send")
    expect(page.locator(".msg-assistant .usage-footer")).to_have_count(1, timeout=TIMEOUT_MS)
    page.fill("#chat-input", "search fan laws")
    page.click("#send")
    expect(page.locator(".citation-link").first).to_be_visible(timeout=TIMEOUT_MS)
    problems = {}
    for path in PAGES:
        if path != "/":
            page.goto(f"{app.url}{path}")
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(300)  # let the page's on-mount data arrive
        assert page.evaluate("document.documentElement.lang") == ("en" if locale == "en-US" else "zh-CN")
        if found := _blocking(page):
            problems[path] = found
    page.context.close()
    assert problems == {}, "\n".join(f"{path}: {item}" for path, items in problems.items() for item in items)


def test_keyboard_alone_opens_a_past_conversation(browser: Browser, app: ReflexApp) -> None:
    page = _tab(browser, app.url, "zh-CN", "light", "keyboard-only")
    page.fill("#chat-input", "你好，第一段对话")
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant .usage-footer")).to_have_count(1, timeout=TIMEOUT_MS)
    first = page.evaluate("new URLSearchParams(location.search).get('session')")
    page.click("#new-chat")
    expect(page.locator(".msg-user")).to_have_count(0)

    page.focus("#session-search")
    page.keyboard.press("Tab")  # the first conversation's row is a real button
    focused = page.evaluate("document.activeElement.className")
    assert "session-open" in focused, focused
    page.keyboard.press("Enter")
    expect(page.locator(".msg-user")).to_contain_text("你好，第一段对话")
    assert first
    page.wait_for_function(
        "expected => new URLSearchParams(location.search).get('session') === expected", arg=first
    )

    page.keyboard.press("Tab")  # next: that conversation's menu, named after it
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "“你好，第一段对话”的操作"
    page.keyboard.press("Enter")
    expect(page.get_by_role("menuitem", name="重命名")).to_be_visible()
    page.keyboard.press("Escape")
    page.context.close()


def test_icon_buttons_have_names_and_the_answer_is_announced(browser: Browser, app: ReflexApp) -> None:
    page = _tab(browser, app.url, "en-US", "light", "names")
    for selector, name in (
        ("#color-mode", "Switch between light and dark"),
        ("#usage-link", "Usage"),
        ("#lang-switch", "Language"),
        ("#send", "Send"),
        ("#attach-button", "Attach"),
    ):
        expect(page.locator(selector)).to_have_attribute("aria-label", name)
    page.fill("#chat-input", "please calculate (1+2)*3")
    page.click("#send")
    expect(page.locator("#announcer")).to_have_text("The answer is complete.", timeout=TIMEOUT_MS)
    expect(page.locator("#announcer")).to_have_attribute("aria-live", "polite")
    page.context.close()
