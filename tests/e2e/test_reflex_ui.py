"""The Reflex UI in a real browser against the whole app (prod build) and the scripted model."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import open_chat, watch_csp
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

ANSWER_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-data")
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1"}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


@pytest.fixture
def page(browser: Browser, app: ReflexApp, llm: ScriptedServer) -> Iterator[Page]:
    llm.reset()
    tab = open_chat(browser, app.url, "alice", ANSWER_TIMEOUT_MS)
    violations = watch_csp(tab)
    yield tab
    tab.context.close()
    assert violations == [], "the UI must work under its Content-Security-Policy"


def _send(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#send")


def test_single_port_serves_ui_api_and_test_page(app: ReflexApp) -> None:
    assert httpx.get(f"{app.url}/health").json()["model"]["demo"] is True
    assert "/api/chat" in httpx.get(f"{app.url}/static/index.html").text
    root = httpx.get(app.url)
    assert root.status_code == 200 and "text/html" in root.headers["content-type"], "/ is the UI here"
    assert "frame-ancestors 'self'" in root.headers["content-security-policy"]


def test_the_ui_loads_under_its_content_security_policy(browser: Browser, app: ReflexApp) -> None:
    """Every page of the UI, opened fresh (a violation on the first load shows only there)."""
    tab = browser.new_context().new_page()
    violations = watch_csp(tab)
    tab.goto(app.url)
    tab.locator("#user-name").fill("csp")
    tab.click("#user-name-save")
    expect(tab.locator("#user-chip")).to_contain_text("csp")
    tab.fill("#chat-input", "search fan laws")
    tab.click("#send")
    link = tab.locator(".msg-assistant").last.locator(".citation-link").first
    expect(link).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    tab.goto(f"{app.url}{link.get_attribute('href')}")
    tab.wait_for_load_state("networkidle")
    tab.goto(f"{app.url}/usage")
    tab.wait_for_load_state("networkidle")
    tab.context.close()
    assert violations == []


def test_calculation_streams_answer_with_tool_card(page: Page) -> None:
    expect(page.get_by_text("scripted demo model", exact=False).first).to_be_visible()
    _send(page, "please calculate (12+8)*3")
    answer = page.locator(".msg-assistant").last
    expect(answer).to_contain_text("The result is 60.", timeout=ANSWER_TIMEOUT_MS)
    card = answer.locator(".tool-card")
    expect(card).to_have_count(1)
    expect(card.locator(".tool-result")).to_contain_text("60")
    expect(answer.locator(".usage-footer")).to_contain_text("token")
    expect(page.locator(".msg-user").last).to_contain_text("please calculate (12+8)*3")


def test_knowledge_search_shows_citations(page: Page) -> None:
    _send(page, "search fan laws")
    answer = page.locator(".msg-assistant").last
    link = answer.locator(".citation-link").first
    expect(link).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    assert "/kb/" in (link.get_attribute("href") or "")
    expect(answer.locator(".tool-card")).to_have_count(1)


def test_model_error_is_shown_in_place(page: Page, llm: ScriptedServer) -> None:
    llm.push({"error": 500, "message": "boom"})
    _send(page, "this fails")
    expect(page.locator(".chat-error").last).to_contain_text("HTTP 500", timeout=ANSWER_TIMEOUT_MS)
    expect(page.locator(".msg-user").last).to_contain_text("this fails")


def test_a_saved_name_the_rule_refuses_is_asked_again_saying_why(browser: Browser, app: ReflexApp) -> None:
    """Tester: a name saved before the rule (``ops/admin``) got the name dialog with no reason."""
    context = browser.new_context()
    context.add_init_script(  # once per context: a second page must not plant it again
        "if (!localStorage.getItem('planted')) { localStorage.setItem('planted', '1');"
        " localStorage.setItem('ventagent_user_name', 'ops/admin'); }"
    )
    tab = context.new_page()
    tab.goto(app.url)
    error = tab.locator(".name-error")
    expect(error).to_contain_text("“ops/admin”")
    expect(error).to_contain_text("“/”")  # the rule's own sentence names the refused character
    expect(error).to_contain_text("rename-user")
    # The open dialog covers the header: a switch comes from another tab (synced through
    # localStorage), and the reason follows it (it stayed in the page-load language).
    expect(error).to_contain_text("The name this browser saved")
    other = context.new_page()
    other.goto(f"{app.url}/favicon.ico")  # same origin, no app: only the stored choice changes
    other.evaluate("localStorage.setItem('ventagent_lang', 'zh-CN')")
    expect(error).to_contain_text("此浏览器保存的名字“ops/admin”已不再被接受")
    expect(error).to_contain_text("“/”")
    other.evaluate("localStorage.setItem('ventagent_lang', 'en')")
    expect(error).to_contain_text("The name this browser saved")
    tab.locator("#user-name").fill("ops-admin")
    tab.click("#user-name-save")
    expect(tab.locator("#user-chip")).to_contain_text("ops-admin")
    context.close()
