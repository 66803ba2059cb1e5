"""The legacy test page after a reload shows each bubble as it streamed (real browser).

legacy-restore.js redraws the session from ``GET /api/chat/history`` through the page's own
``handleEvent``; every visible word of a bubble — status line, tool cards, reasoning, sources,
usage footer, file chips, errors — must read as it did live.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import watch_csp
from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer
from ventapp.agent.errors import CANCELLED

STATIC = Path(__file__).resolve().parents[2] / "ventapp" / "api" / "static"
BUBBLES = """() => Array.from(document.querySelectorAll('#log > .bubble')).map(
    b => ({kind: b.className, state: b.dataset.state || '', text: b.innerText}))"""
"""Each bubble's kind, state and visible text (``innerText``: a closed reasoning block shows its summary)."""


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


def _send(page: Page, text: str, state: str = "done") -> None:
    page.fill("#message", text)
    page.click("#send")
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", state, timeout=20_000)


def test_a_reload_redraws_every_bubble_as_it_streamed(page: Page, llm: ScriptedServer) -> None:
    """Testers found one difference at a time (the reasoning, the duration, the file chip, the tool
    card's title, "Sources (model only)"; the todo list was gone too): this compares every
    bubble's visible text at once."""
    page.fill("#user", "legacy-redraw")
    page.set_input_files("#file", files=[{"name": "fans.csv", "mimeType": "text/csv", "buffer": b"fan,kW\n"}])
    _send(page, "please calculate (12+8)*3")  # a tool card, "Sources (model only)", a file chip
    _send(page, "search fan laws")  # sources with links, scores and snippets
    llm.push({"content": "Use a bigger fan.", "reasoning": "The duct is long."})
    _send(page, "which fan?")  # a reasoning block
    todos = [
        {"content": "Size the fan", "status": "in_progress"},
        {"content": "Check noise", "status": "pending"},
    ]
    llm.push(
        {"tool_calls": [{"name": "write_todos", "arguments": {"todos": todos}}]},
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "1/0"}}]},
        {"content": "Planned."},
    )
    _send(page, "plan it")  # a todo list, a failed tool card
    llm.push({"error": 500, "message": "boom"})
    _send(page, "this fails", state="error")  # the error frame's sentence
    live = page.evaluate(BUBBLES)
    assert "Sources (model only)" in live[1]["text"] and "[model_failed]" in live[-1]["text"]
    assert "\u25b8 Size the fan" in live[-3]["text"], "the todo list is drawn live"

    page.reload()

    expect(page.locator(".bubble")).to_have_count(len(live))
    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "error")
    restored = page.evaluate(BUBBLES)
    for number, (was, now) in enumerate(zip(live, restored, strict=True)):
        assert now == was, f"bubble {number} differs after the reload"
    model_only = page.locator(".bubble.assistant").first.locator(".citations")
    expect(model_only).to_have_attribute("data-model-only", "true")


def test_a_reload_shows_a_stopped_answer_as_it_stopped(
    page: Page, llm: ScriptedServer, api: ApiServer
) -> None:
    """The stored partial answer ends with the store's "[stopped]" marker, which the stream never sent."""
    page.fill("#user", "legacy-stopped")
    _send(page, "hello")
    session_id = page.locator("#session").inner_text().removeprefix("session ")
    llm.delay_ms = 40  # slow enough to stop it half-way
    try:
        llm.push({"content": long_answer(300)})
        page.fill("#message", "a long one")
        page.click("#send")
        expect(page.locator(".bubble.assistant").last.locator(".seg")).to_have_count(1)
        page.wait_for_timeout(300)
        # The page's own Stop (try19: only a reload stopped it), in Send's place while it streams.
        expect(page.locator("#send")).to_be_hidden()
        page.click("#stop")
        expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "error")
        expect(page.locator("#send")).to_be_visible()
        expect(page.locator("#stop")).to_be_hidden()
    finally:
        llm.delay_ms = 0
    runs = httpx.get(f"{api.url}/api/sessions/{session_id}/runs", params={"user_name": "legacy-stopped"})
    latest = runs.json()["runs"][0]
    assert (latest["status"], latest["error"]) == ("cancelled", CANCELLED.message), "the person's Stop"
    live = page.evaluate(BUBBLES)
    assert "[cancelled]" in live[-1]["text"]

    page.reload()

    expect(page.locator(".bubble.assistant").last).to_have_attribute("data-state", "error")
    assert page.evaluate(BUBBLES) == live


def test_every_tool_card_is_titled_in_the_page_language_live_and_after_a_reload(page: Page) -> None:
    """A card the person never approved read "calculate": the page learned labels from approval
    cards only. ``tool_call`` / ``tool_result`` carry ``label`` (history's ``tool_calls[].label``)."""
    page.fill("#user", "legacy-card-title")
    _send(page, "please calculate (12+8)*3")
    title = page.locator(".bubble.assistant").last.locator(".tool-card .title")
    expect(title).to_have_text("Calculator (calculate)")
    page.reload()
    expect(title).to_have_text("Calculator (calculate)")


def test_the_file_chip_is_a_word_live_and_after_a_reload(page: Page) -> None:
    """Tester: the 📎 drew as a box on a machine without an emoji font."""
    page.fill("#user", "legacy-chip")
    page.set_input_files("#file", files=[{"name": "fans.csv", "mimeType": "text/csv", "buffer": b"fan,kW\n"}])
    _send(page, "hello with a file")
    chip = page.locator(".bubble.user .status")
    expect(chip).to_have_text("attached: fans.csv")
    page.reload()
    expect(chip).to_have_text("attached: fans.csv")


def test_the_page_draws_no_character_an_emoji_font_must_supply() -> None:
    """No emoji (a character beyond the Basic Multilingual Plane, or its surrogate escape) in the
    page's files: a machine without an emoji font draws it as a box."""
    astral = re.compile(r"[\U00010000-\U0010FFFF]|\\u[dD][89abAB][0-9a-fA-F]{2}")
    found = {
        path.name: astral.findall(path.read_text(encoding="utf-8"))
        for path in sorted(STATIC.iterdir())
        if path.suffix in (".html", ".js", ".css")
    }
    assert {name: marks for name, marks in found.items() if marks} == {}
