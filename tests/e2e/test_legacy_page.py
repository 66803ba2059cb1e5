"""The spec's minimal test page in a real browser, streaming from /api/chat (pitfall 13)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.e2e.browser import watch_csp
from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer


@pytest.fixture
def page(browser: Browser, api: ApiServer, llm: ScriptedServer) -> Iterator[Page]:
    llm.reset()
    context = browser.new_context()
    tab = context.new_page()
    violations = watch_csp(tab)
    tab.goto(f"{api.url}/static/index.html")
    yield tab
    context.close()
    assert violations == [], "the test page must work under the Content-Security-Policy"


def _send(page: Page, text: str) -> None:
    page.fill("#message", text)
    page.click("#send")
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "done", timeout=20_000)


def test_calculation_shows_tool_card_and_streamed_answer(page: Page) -> None:
    _send(page, "please calculate (12+8)*3")
    bubble = page.locator(".bubble.assistant").last
    card = bubble.locator(".tool-card")
    expect(card).to_have_count(1)
    expect(card.locator(".tool-result")).to_have_text("60")
    expect(bubble).to_contain_text("The result is 60.")
    # An agent's prompt runs to thousands of tokens: grouped as the Reflex UI groups them (try18).
    expect(bubble.locator(".usage")).to_have_text(re.compile(r" \d{1,3}(,\d{3})+ in / \d+ out tokens$"))


def test_the_status_line_names_the_agent_in_english(page: Page) -> None:
    """The English page showed "通风智能体 done": ``cn_agent`` is Chinese; the frame's ``label`` is ours."""
    _send(page, "please calculate 2+2")
    status = page.locator(".bubble.assistant").last.locator(".status")
    expect(status).to_have_text("Ventilation agent done")
    assert "通风" not in (page.locator("#log").text_content() or "")


def test_tokens_after_a_card_do_not_destroy_it(page: Page, llm: ScriptedServer) -> None:
    """Pitfall 13: text before the card, the card, text after it — all three survive in order."""
    llm.push(
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "2*21"}}]},
        {"content": "The answer is 42 exactly."},
    )
    _send(page, "two times twenty-one")
    bubble = page.locator(".bubble.assistant").last
    expect(bubble.locator(".tool-card .tool-result")).to_have_text("42")
    order = bubble.evaluate(
        """b => Array.from(b.querySelectorAll('.seg, .tool-card')).map(
               n => n.classList.contains('tool-card') ? 'CARD' : n.textContent)"""
    )
    assert "CARD" in order, order
    after = order[order.index("CARD") + 1 :]
    assert "".join(after).strip() == "The answer is 42 exactly.", order


def test_knowledge_search_lists_citations(page: Page) -> None:
    _send(page, "search fan laws")
    links = page.locator(".bubble.assistant").last.locator(".citations a")
    expect(links.first).to_be_visible()
    href = links.first.get_attribute("href") or ""
    assert "/kb/" in href and links.first.text_content()


def test_error_is_shown_in_place(page: Page, llm: ScriptedServer) -> None:
    llm.push({"error": 500, "message": "boom"})
    page.fill("#message", "this fails")
    page.click("#send")
    bubble = page.locator(".bubble.assistant").last
    expect(bubble).to_have_attribute("data-state", "error", timeout=20_000)
    expect(bubble.locator(".error")).to_contain_text("HTTP 500")
    # The header above the error frame leaves "thinking" for the error state.
    expect(bubble.locator(".status")).to_have_text("stopped with an error")


def test_a_refusal_shows_its_message_in_the_page_language(page: Page) -> None:
    """A refusal's ``message`` is worded by the Accept-Language the page sends (its ``lang``);
    ``detail`` is always English, so a Chinese copy of the page showed English when it read that."""
    page.evaluate("document.documentElement.lang = 'zh-CN'")
    page.fill("#user", "bad<name")
    page.fill("#message", "hello")
    page.click("#send")
    error = page.locator(".bubble.assistant").last.locator(".error")
    expect(error).to_contain_text("HTTP 400", timeout=20_000)
    expect(error).to_contain_text("user_name 只能包含")
    assert "may hold only" not in (error.text_content() or "")


def test_a_long_streamed_answer_shows_exactly_the_stored_text_around_its_card(
    page: Page, llm: ScriptedServer, api: ApiServer
) -> None:
    """Frames now carry ``seq`` (issue 11): the page ignores it; text and card stay in place."""
    answer = long_answer(2000)
    llm.push(
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "12*8*3"}}]},
        {"content": answer},
    )
    page.fill("#user", "legacy-long")
    _send(page, "a long one after a tool")
    bubble = page.locator(".bubble.assistant").last
    order = bubble.evaluate(
        """b => Array.from(b.querySelectorAll('.seg, .tool-card')).map(
               n => n.classList.contains('tool-card') ? 'CARD' : n.textContent)"""
    )
    assert order[0] == "CARD" and "".join(order[1:]) == answer
    expect(bubble.locator(".tool-card .tool-result")).to_have_text("288")
    session_id = page.locator("#session").inner_text().removeprefix("session ")
    history = httpx.get(
        f"{api.url}/api/chat/history/{session_id}", params={"user_name": "legacy-long"}
    ).json()
    assert history["messages"][-1]["content"] == answer, "what streamed is what was stored"


def test_a_reload_shows_the_reasoning_block_the_stream_showed(page: Page, llm: ScriptedServer) -> None:
    llm.push({"content": "Use a bigger fan.", "reasoning": "The duct is long. " + long_answer(80)})
    page.fill("#user", "legacy-thinker")
    _send(page, "which fan?")
    reasoning = page.locator(".bubble.assistant").last.locator("details.reasoning")
    live = reasoning.text_content()
    assert live and "The duct is long." in live

    page.reload()
    restored = page.locator(".bubble.assistant").last
    expect(restored).to_contain_text("Use a bigger fan.")
    assert restored.locator("details.reasoning").text_content() == live
    expect(restored.locator("details.reasoning")).not_to_have_attribute("open", "")


def test_the_page_shares_the_main_ui_stored_user_name(page: Page) -> None:
    # The main UI keeps the name in localStorage "ventagent_user_name" (ChatState.user_name).
    page.evaluate("localStorage.setItem('ventagent_user_name', 'shared-engineer')")
    page.reload()
    expect(page.locator("#user")).to_have_value("shared-engineer")
    page.fill("#user", "renamed-engineer")
    assert page.evaluate("localStorage.getItem('ventagent_user_name')") == "renamed-engineer"


def test_a_reload_shows_the_answers_duration_and_the_questions_file_as_live(page: Page) -> None:
    """Tester: after a reload the answer lost its "7.7 s" and the question its file chip."""
    page.fill("#user", "legacy-files")
    page.set_input_files("#file", files=[{"name": "fans.csv", "mimeType": "text/csv", "buffer": b"fan,kW\n"}])
    _send(page, "please calculate (12+8)*3")
    question = page.locator(".bubble.user").last
    expect(question.locator(".status")).to_have_text("attached: fans.csv")
    live = page.locator(".bubble.assistant").last.locator(".usage").inner_text()
    assert live.split(" \u00b7 ")[0].endswith(" s"), live

    page.reload()
    restored = page.locator(".bubble.assistant").last
    expect(restored).to_contain_text("The result is 60.")
    expect(restored.locator(".usage")).to_have_text(live)
    expect(page.locator(".bubble.user").last.locator(".status")).to_have_text("attached: fans.csv")


def _served_in(page: Page, lang: str) -> None:
    """Serve the page with ``<html lang=…>``, so it asks for ``lang`` from its first request on (a reload too)."""

    def rewrite(route: Route) -> None:
        response = route.fetch()
        body = response.text().replace('<html lang="en">', f'<html lang="{lang}">', 1)
        route.fulfill(response=response, body=body)

    page.route("**/static/index.html", rewrite)
    page.reload()
    assert page.evaluate("document.documentElement.lang") == lang


@pytest.mark.parametrize(
    ("lang", "sentence"), [("zh-CN", "这个算式无法计算"), ("en", "cannot be calculated")]
)
def test_a_refused_calculation_shows_the_sentence_not_the_models_text(
    page: Page, llm: ScriptedServer, lang: str, sentence: str
) -> None:
    """The card read "Tool 'calculate' failed: [bad_expression] 这个算式无法计算… (division by zero in
    '1/0')": the wrapper and the code are the model's; a person reads the frame's ``message`` in the
    page's language (the raw text stays on hover), live and after a reload."""
    _served_in(page, lang)
    page.fill("#user", f"legacy-refused-{lang}")
    llm.push(
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "1/0"}}]},
        {"content": "That cannot be done."},
    )
    _send(page, "divide one by zero")
    for when in ("live", "reloaded"):
        if when == "reloaded":
            page.reload()
        result = page.locator(".bubble.assistant").last.locator(".tool-card.failed .tool-result")
        expect(result).to_contain_text(sentence)
        shown = result.text_content() or ""
        assert "Tool 'calculate' failed" not in shown and "[bad_expression]" not in shown, (when, shown)
        assert "Tool 'calculate' failed: [bad_expression]" in (result.get_attribute("title") or ""), when
