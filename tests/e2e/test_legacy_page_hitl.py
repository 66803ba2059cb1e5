"""The spec's minimal test page answers approvals through ``POST /api/chat/resume`` (real browser).

``HITL_TOOLS=calculate`` makes the scripted model's calculation pause for approval; the card
carries the frame's ``interrupt_token`` and the rest of the run streams into a new bubble.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import watch_csp
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env

TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def hitl_api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    env = {**app_env(tmp_path_factory.mktemp("data"), llm.base_url), "HITL_TOOLS": "calculate"}
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def page(browser: Browser, hitl_api: ApiServer, llm: ScriptedServer) -> Iterator[Page]:
    llm.reset()
    # A Chinese browser (Accept-Language zh-CN): the English test page still asks for English.
    context = browser.new_context(locale="zh-CN")
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    violations = watch_csp(tab)
    tab.goto(f"{hitl_api.url}/static/index.html")
    yield tab
    context.close()
    assert violations == [], "the test page must work under the Content-Security-Policy"


def _paused(page: Page, user: str) -> None:
    page.fill("#user", user)
    page.fill("#message", "please calculate (12+8)*3")
    page.click("#send")
    bubble = page.locator(".bubble.assistant").last
    expect(bubble).to_have_attribute("data-state", "waiting")
    card = bubble.locator(".interrupt")
    expect(card).to_have_attribute("data-kind", "tool_approval")
    expect(card.locator(".approval-args")).to_contain_text("(12+8)*3")
    # Tester: "计算器 (calculate) needs your approval…"; one language, the page's own.
    expect(card.locator(".approval-reason")).to_have_text("Calculator needs your approval before it runs.")
    # Tester: the card read "计算器 (calculate)" on this English page; the frame's label is English.
    expect(card.locator(".approval-call strong")).to_have_text("Calculator (calculate)")
    expect(bubble.locator(".tool-card .title")).to_have_text("Calculator (calculate)")
    expect(bubble.locator(".status")).to_have_text("waiting for you")


def _session(page: Page) -> str:
    return page.locator("#session").inner_text().removeprefix("session ")


def test_approving_runs_the_tool_and_streams_the_rest(page: Page, hitl_api: ApiServer) -> None:
    _paused(page, "legacy-approver")
    page.locator(".interrupt button.approve").click()
    answer = page.locator(".bubble.assistant").last
    expect(answer).to_have_attribute("data-state", "done")
    expect(answer.locator(".tool-result")).to_have_text("60")
    expect(answer.locator(".tool-card .title")).to_have_text("Calculator (calculate)")
    expect(answer).to_contain_text("The result is 60.")
    expect(page.locator(".interrupt")).to_have_attribute("data-state", "answered")
    expect(page.locator(".interrupt button.approve")).to_be_disabled()
    expect(page.locator(".bubble.assistant").first).to_have_attribute("data-state", "answered")
    pending = httpx.get(
        f"{hitl_api.url}/api/chat/interrupt",
        params={"session_id": _session(page), "user_name": "legacy-approver"},
    )
    assert pending.status_code == 204, "nothing is left waiting"


def test_rejecting_skips_the_tool(page: Page, llm: ScriptedServer) -> None:
    _paused(page, "legacy-rejecter")
    page.locator(".interrupt button.reject").click()
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "done")
    expect(page.locator(".interrupt")).to_have_attribute("data-state", "answered")
    tool_results = [m for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"]
    assert tool_results and all("60" not in str(m.get("content")) for m in tool_results), tool_results
    # Tester: the page sent its own English reason and showed langchain's wrapper round it; the
    # server words the reason in the page's language (English here), and the line shows only it.
    reason = "The user rejected this action without giving a reason."
    assert reason in str(tool_results[-1]["content"])
    expect(page.locator(".bubble.assistant").last.locator(".tool-result")).to_have_text(reason)


def test_a_new_message_closes_the_card_it_dropped(page: Page) -> None:
    """A tester: after sending instead of answering, the old card still read "waiting for you"
    and its Approve answered 409."""
    _paused(page, "legacy-dropper")
    first = page.locator(".bubble.assistant").first
    page.fill("#message", "hello instead")
    page.click("#send")
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "done")
    expect(first).to_have_attribute("data-state", "dropped")
    expect(first.locator(".status").first).to_contain_text("dropped")
    expect(first.locator(".interrupt button.approve")).to_be_disabled()
    expect(first.locator(".tool-result")).to_have_text("—")


def test_a_reload_shows_the_conversation_and_its_waiting_card_again(page: Page, llm: ScriptedServer) -> None:
    """Tester: the page forgot its session on a reload, so a waiting approval could not be answered."""
    page.fill("#user", "legacy-reloader")
    page.fill("#message", "hello first")
    page.click("#send")
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "done")
    _paused(page, "legacy-reloader")
    session = _session(page)

    page.reload()

    expect(page.locator("#session")).to_have_text(f"session {session}")
    expect(page.locator(".bubble.user")).to_have_text(["hello first", "please calculate (12+8)*3"])
    answers = page.locator(".bubble.assistant")
    expect(answers).to_have_count(2)
    expect(answers.first).to_have_attribute("data-state", "done")
    expect(answers.first).to_contain_text("hello first")
    paused = answers.nth(1)
    expect(paused).to_have_attribute("data-state", "waiting")
    expect(paused.locator(".status")).to_have_text("waiting for you")
    expect(paused.locator(".interrupt .approval-args")).to_contain_text("(12+8)*3")
    # The browser asks for zh-CN; the page is English and asks for its own language, as on the stream.
    expect(paused.locator(".approval-reason")).to_have_text("Calculator needs your approval before it runs.")
    expect(page.locator("#send")).to_be_enabled()

    paused.locator(".interrupt button.approve").click()

    answer = page.locator(".bubble.assistant").last
    expect(answer).to_have_attribute("data-state", "done")
    expect(answer).to_contain_text("The result is 60.")
    expect(paused).to_have_attribute("data-state", "answered")

    page.fill("#message", "and after that?")  # the reloaded page goes on in the same session
    page.click("#send")
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "done")
    user_texts = [str(m["content"]) for m in llm.requests()[-1]["messages"] if m.get("role") == "user"]
    assert user_texts[0] == "hello first" and user_texts[-1] == "and after that?"
    expect(page.locator("#session")).to_have_text(f"session {session}")


def test_new_chat_is_not_undone_by_a_reload(page: Page) -> None:
    page.fill("#user", "legacy-new-chat")
    page.fill("#message", "hello there")
    page.click("#send")
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "done")
    page.click("#new-chat")

    page.reload()

    expect(page.locator("#session")).to_have_text("new conversation")
    expect(page.locator(".bubble")).to_have_count(0)


def test_a_reload_titles_a_reviewed_tool_card_as_the_live_page_did(page: Page) -> None:
    """Tester: live the card read "Calculator (calculate)", after a reload "calculate"."""
    _paused(page, "legacy-titles")
    page.locator(".interrupt button.approve").click()
    answer = page.locator(".bubble.assistant").last
    expect(answer).to_have_attribute("data-state", "done")
    expect(answer.locator(".tool-card .title")).to_have_text("Calculator (calculate)")
    footer = answer.locator(".usage").inner_text()

    page.reload()

    restored = page.locator(".bubble.assistant").last
    expect(restored).to_have_attribute("data-state", "done")
    expect(restored.locator(".tool-card .title")).to_have_text("Calculator (calculate)")
    expect(restored.locator(".tool-result")).to_have_text("60")
    expect(restored.locator(".status")).to_have_text("Ventilation agent done")
    expect(restored.locator(".citations")).to_have_text("Sources (model only)")
    expect(restored.locator(".usage")).to_have_text(footer)


def test_a_reload_shows_a_dropped_card_as_dropped_not_failed(page: Page) -> None:
    """After a reload the dropped answer read "stopped with an error … [cancelled]" in red."""
    _paused(page, "legacy-reload-dropped")
    page.fill("#message", "hello instead")
    page.click("#send")
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "done")
    dropped = page.locator(".bubble.assistant").first
    expect(dropped).to_have_attribute("data-state", "dropped")

    page.reload()

    restored = page.locator(".bubble.assistant").first
    expect(restored).to_have_attribute("data-state", "dropped")
    expect(restored.locator(".status")).to_have_text("dropped: a new message was sent instead")
    expect(restored.locator(".tool-card .title")).to_have_text("Calculator (calculate)")
    expect(restored.locator(".tool-result")).to_have_text("—")
    expect(restored.locator(".error")).to_have_count(0)
