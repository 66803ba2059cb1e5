"""The usage and schedules pages on a phone (390 px), in a real browser: headings on one line beside
or above their controls, table cells a word or number a line (the tables scroll sideways in their
cards), nothing wider than the screen. One app for the module, an operator's usage and schedules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
USER = "phone-operator"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-phone")
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1", "AUTH_NONE_OPERATORS": USER}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


def _phone(browser: Browser, app: ReflexApp) -> Page:
    page = browser.new_context(viewport=PHONE, locale="zh-CN").new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app.url)
    page.locator("#user-name").fill(USER)
    page.click("#user-name-save")
    expect(page.locator("#user-name")).to_have_count(0)
    return page


# Lines a piece of text takes (its rects' distinct tops), and whether boxes of one row overlap.
_LAYOUT = """(selector) => {
    const lines = (el) => {  // a badge's or button's own box sits a little above its text: text only
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        const middles = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const range = document.createRange();
            range.selectNodeContents(node);
            for (const r of range.getClientRects()) if (r.width > 0) middles.push(r.top + r.height / 2);
        }
        middles.sort((a, b) => a - b);
        return middles.filter((m, i) => i === 0 || m - middles[i - 1] > 6).length;
    };
    const label = (el) => (el.id ? '#' + el.id : el.tagName) + ' ' + el.textContent.trim().slice(0, 24);
    const broken = [...document.querySelectorAll(selector)].filter((el) => lines(el) > 1).map(label);
    const overlaps = [];
    for (const heading of document.querySelectorAll('h1, h2, h3')) {
        const mine = heading.getBoundingClientRect();
        for (const other of heading.parentElement.querySelectorAll('button, p, span')) {
            if (heading.contains(other)) continue;
            const box = other.getBoundingClientRect();
            const apart = box.right <= mine.left || box.left >= mine.right || box.bottom <= mine.top || box.top >= mine.bottom;
            if (!apart && box.width > 0) overlaps.push(label(heading) + ' / ' + label(other));
        }
    }
    return {broken, overlaps, page_width: document.documentElement.scrollWidth};
}"""


def _layout(page: Page, selector: str) -> dict[str, Any]:
    return page.evaluate(_LAYOUT, selector)


def test_the_usage_page_reads_on_a_phone(browser: Browser, app: ReflexApp) -> None:
    """Lead (ui12): at 390 px 最近的模型调用 broke into 最近的模型调 / 用 beside its pager (two pages of
    calls); the operators' table stood 每日额度 and 设置额度 one character a line."""
    with httpx.Client(base_url=app.url, timeout=30) as client:
        for number in range(21):  # one more call than a page of the ledger holds
            files = {"message": (None, f"call {number}"), "user_name": (None, USER)}
            assert client.post("/api/chat", files=files).status_code == 200
    page = _phone(browser, app)
    page.goto(f"{app.url}/usage")
    expect(page.locator(".ledger-row")).to_have_count(20)
    expect(page.locator("#every-user-usage")).to_be_visible()
    page.screenshot(path=str(_shots(app) / "usage-390.png"), full_page=True)

    layout = _layout(page, "h1, h2, h3, #ledger-table th, #every-user-usage th, #every-user-usage td")
    assert layout["broken"] == [], f"broken into lines at 390 px: {layout}"
    assert layout["overlaps"] == [], f"a heading overlaps its controls: {layout}"
    assert layout["page_width"] <= PHONE["width"], f"the page is wider than the phone: {layout}"
    page.context.close()


def test_the_schedules_page_reads_on_a_phone(browser: Browser, app: ReflexApp) -> None:
    """Lead (ui12): at 390 px the schedule's expression stood one field a line, and the runs table's
    立即执行, 会话 and 打开 broke a character a line."""
    page = _phone(browser, app)
    page.goto(f"{app.url}/schedules")
    page.click("#new-schedule")
    page.fill("#schedule-name", "每日早间瓦斯报告")
    page.fill("#schedule-prompt", "hello from a schedule")
    page.fill("#schedule-cron", "0 7 * * 1-5")
    expect(page.locator("#cron-error")).to_have_count(0)
    page.click("#schedule-save")
    expect(page.locator("#schedule-form")).to_have_count(0)
    page.locator(".schedule-run-now").click()
    page.locator(".schedule-show-runs").click()
    expect(page.locator(".schedule-run-row")).to_have_count(1)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(_shots(app) / "schedules-390.png"), full_page=True)

    layout = _layout(
        page, "h1, #schedules-list th, .schedule-cron, .schedule-next, #schedule-runs th, #schedule-runs td"
    )
    assert layout["broken"] == [], f"broken into lines at 390 px: {layout}"
    assert layout["overlaps"] == [], f"a heading overlaps its controls: {layout}"
    assert layout["page_width"] <= PHONE["width"], f"the page is wider than the phone: {layout}"
    page.context.close()


def _shots(app: ReflexApp) -> Path:
    """Where the screenshots go (beside the app's log, for a person to look at)."""
    return app.log_path.parent
