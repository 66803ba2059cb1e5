"""One conversation in several tabs, in a real browser (issues 11 and 18 item 1).

The whole app (prod build) and a scripted model that streams one word every 20 ms, so a
600-word answer takes about twelve seconds: long enough for a second tab to open it midway,
even on a busy machine.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import open_chat, watch_csp
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.script import MARKDOWN_ANSWER, long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
USER = "live-e2e"
WORDS = 600
SESSION_IN_URL = re.compile(r"[?&]session=([0-9a-f-]{36})")


@pytest.fixture(scope="module")
def slow_llm() -> Iterator[ScriptedServer]:
    with ScriptedServer(delay_ms=20) as server:
        yield server


@pytest.fixture(scope="module")
def app(slow_llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-live")
    env = {**app_env(data_dir, slow_llm.base_url), "DEMO_MODE": "1"}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


def _tab(browser: Browser, app: ReflexApp) -> Page:
    tab = open_chat(browser, app.url, USER, TIMEOUT_MS)
    violations = watch_csp(tab)
    tab.on("close", lambda _page: None)
    tab.csp_violations = violations  # type: ignore[attr-defined]  # checked by the tests
    return tab


def _session_id(page: Page) -> str:
    expect(page).to_have_url(SESSION_IN_URL)
    match = SESSION_IN_URL.search(page.url)
    assert match
    return match.group(1)


def _bubbles(page: Page) -> list[str]:
    return page.locator(".msg-user, .msg-assistant").all_inner_texts()


def _send(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#send")


def test_a_second_tab_follows_the_live_answer_and_its_stop_stops_it_for_both(
    browser: Browser, app: ReflexApp, slow_llm: ScriptedServer
) -> None:
    slow_llm.reset()
    slow_llm.push({"content": long_answer(WORDS)})
    a = _tab(browser, app)
    _send(a, "long answer please")
    live_a = a.locator(".msg-live")
    expect(live_a).to_have_attribute("data-state", "streaming")
    # The new session is in the URL and the sidebar before the first answer ends.
    session_id = _session_id(a)
    expect(a.locator(f'.session-item[data-session-id="{session_id}"]')).to_have_count(1)
    expect(live_a).to_have_attribute("data-state", "streaming")

    b = _tab(browser, app)
    b.goto(f"{app.url}/?session={session_id}")
    live_b = b.locator(".msg-live")
    expect(live_b).to_have_attribute("data-state", "streaming")
    expect(live_b.locator(".md-body")).to_contain_text("Ventilation systems move fresh air")
    expect(b.locator("#stop")).to_be_visible()

    b.click("#stop")
    for tab in (a, b):
        expect(tab.locator(".msg-assistant:not(.msg-live)").last.locator(".stopped-note")).to_be_visible()
        expect(tab.locator("#send")).to_be_visible()
    assert _bubbles(a) == _bubbles(b), "both tabs show the same conversation at the end"
    for tab in (a, b):
        assert tab.csp_violations == []  # type: ignore[attr-defined]
        tab.context.close()


def test_both_tabs_end_with_the_same_answer_frame_for_frame(
    browser: Browser, app: ReflexApp, slow_llm: ScriptedServer
) -> None:
    slow_llm.reset()
    slow_llm.push({"content": long_answer(WORDS)})
    a = _tab(browser, app)
    _send(a, "long answer please")
    session_id = _session_id(a)
    b = _tab(browser, app)
    b.goto(f"{app.url}/?session={session_id}")
    expect(b.locator(".msg-live")).to_have_attribute("data-state", "streaming")
    for tab in (a, b):
        expect(tab.locator(".msg-assistant:not(.msg-live)")).to_have_count(1, timeout=2 * TIMEOUT_MS)
        expect(tab.locator(".msg-assistant .md-body").last).to_have_text(long_answer(WORDS))
    assert _bubbles(a) == _bubbles(b)
    a.context.close()
    b.context.close()


def test_a_message_added_over_the_api_shows_after_a_reload_and_a_sidebar_click(
    browser: Browser, app: ReflexApp, slow_llm: ScriptedServer
) -> None:
    slow_llm.reset()
    tab = _tab(browser, app)
    _send(tab, "hello there")
    expect(tab.locator(".msg-assistant:not(.msg-live)")).to_have_count(1, timeout=TIMEOUT_MS)
    session_id = _session_id(tab)

    def add_over_the_api(text: str) -> None:
        files = {"message": (None, text), "user_name": (None, USER), "session_id": (None, session_id)}
        with httpx.Client(base_url=app.url, timeout=30) as client:
            assert client.post("/api/chat", files=files).status_code == 200

    add_over_the_api("first from the api")
    tab.reload()
    expect(tab.locator(".msg-user")).to_have_text(["hello there", "first from the api"])

    add_over_the_api("second from the api")
    tab.locator(f'.session-item[data-session-id="{session_id}"] .session-title').click()
    expect(tab.locator(".msg-user")).to_have_text(
        ["hello there", "first from the api", "second from the api"]
    )
    tab.context.close()


# Markdown after a tool card; 150 ms between words, so the last flush (every 50 ms) shows all
# of the text before `done` replaces the live bubble by the finished one.
STREAMED_MARKDOWN = MARKDOWN_ANSWER + "\nAfter the table and the code, **bold** and `code` in a last line.\n"


def test_a_streamed_answer_renders_exactly_as_the_finished_and_the_reloaded_one(
    browser: Browser, app: ReflexApp, slow_llm: ScriptedServer
) -> None:
    slow_llm.reset()
    slow_llm.push(
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "12*8*3"}}]},
        {"content": STREAMED_MARKDOWN},
    )
    slow_llm.delay_ms = 150
    tab = _tab(browser, app)
    # Remember the live bubble's last rendering before the finished one replaces it.
    tab.evaluate(
        """() => {
        window.__lastLive = null;
        new MutationObserver(() => {
          const live = document.querySelector('.msg-live');
          const body = live && live.querySelector('.md-body');
          if (body) window.__lastLive = {
            md: body.innerHTML,
            cards: Array.from(live.querySelectorAll('.tool-card .tool-result')).map(n => n.textContent),
            order: Array.from(live.querySelectorAll('.tool-card, .md-body')).map(n => n.className.includes('tool-card') ? 'CARD' : 'TEXT'),
          };
        }).observe(document.body, {subtree: true, childList: true, characterData: true});
      }"""
    )
    _send(tab, "render this please")

    def finished() -> dict[str, object]:
        bubble = tab.locator(".msg-assistant:not(.msg-live)").last
        expect(bubble.locator(".md-body")).to_contain_text("in a last line", timeout=TIMEOUT_MS)
        return bubble.evaluate(
            """b => ({
              md: b.querySelector('.md-body').innerHTML,
              cards: Array.from(b.querySelectorAll('.tool-card .tool-result')).map(n => n.textContent),
              order: Array.from(b.querySelectorAll('.tool-card, .md-body')).map(n => n.className.includes('tool-card') ? 'CARD' : 'TEXT'),
            })"""
        )

    try:
        done = finished()
    finally:
        slow_llm.delay_ms = 20
    live = tab.evaluate("() => window.__lastLive")
    assert live is not None and "<table" in live["md"] and "<h1" in live["md"] and "<code" in live["md"]
    assert live == done, "the live bubble rendered the whole answer exactly as the finished one"
    assert done["order"] == ["CARD", "TEXT"] and "288" in done["cards"][0]
    tab.reload()
    # The reloaded page shows the code block plain first and highlighted a moment later (the
    # highlighter loads its grammar lazily; a loaded run caught the plain one): compare once settled.
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while (reloaded := finished()) != done and time.monotonic() < deadline:
        tab.wait_for_timeout(200)
    assert reloaded == done, "and exactly as the answer read back from the server"
    assert tab.csp_violations == []  # type: ignore[attr-defined]
    tab.context.close()


FIRST_THOUGHTS = long_answer(250)
SECOND_THOUGHTS = "Now the result: " + long_answer(250)


def test_a_long_streamed_reasoning_renders_exactly_as_the_finished_and_the_reloaded_one(
    browser: Browser, app: ReflexApp, slow_llm: ScriptedServer
) -> None:
    """Issue 18: the reasoning streams through a browser buffer (small appends) like the text; what
    the live block last showed is what the finished answer shows, a paragraph per model call, and
    what it shows after a reload (the reasoning is stored with the answer)."""
    slow_llm.reset()
    slow_llm.push(
        {
            "tool_calls": [{"name": "calculate", "arguments": {"expression": "12*8*3"}}],
            "reasoning": FIRST_THOUGHTS,
        },
        {"content": "The answer is 288.", "reasoning": SECOND_THOUGHTS},
    )
    tab = _tab(browser, app)
    tab.evaluate(
        """() => {
        window.__lastThought = null;
        new MutationObserver(() => {
          const text = document.querySelector('.msg-live .msg-reasoning-text');
          if (text) window.__lastThought = text.textContent;
        }).observe(document.body, {subtree: true, childList: true, characterData: true});
      }"""
    )
    _send(tab, "think about 12*8*3")
    expect(tab.locator(".msg-live .msg-reasoning")).to_have_attribute("open", "")
    finished = tab.locator(".msg-assistant:not(.msg-live)").last
    expect(finished.locator(".md-body")).to_have_text("The answer is 288.", timeout=2 * TIMEOUT_MS)

    expected = FIRST_THOUGHTS + "\n\n" + SECOND_THOUGHTS
    assert tab.evaluate("() => window.__lastThought") == expected, "the live block showed it all"
    assert finished.locator(".msg-reasoning-text").text_content() == expected
    expect(finished.locator(".msg-reasoning")).not_to_have_attribute("open", "")
    tab.reload()  # the reasoning is stored with the answer: a re-read shows it, collapsed
    reread = tab.locator(".msg-assistant:not(.msg-live)").last
    expect(reread.locator(".md-body")).to_have_text("The answer is 288.")
    expect(reread.locator(".msg-reasoning")).not_to_have_attribute("open", "")
    assert reread.locator(".msg-reasoning-text").text_content() == expected
    assert tab.csp_violations == []  # type: ignore[attr-defined]
    tab.context.close()


def test_a_message_refused_while_another_tab_answers_waits_in_the_box_until_that_answer_ends(
    browser: Browser, app: ReflexApp, slow_llm: ScriptedServer
) -> None:
    """Tester's F2/F3: the notice kept saying "still answering" after the other answer ended, and
    the tab did not show that answer until a reload."""
    slow_llm.reset()
    slow_llm.push({"content": "A short first answer."}, {"content": long_answer(WORDS // 3)})
    a = _tab(browser, app)
    _send(a, "first")
    expect(a.locator(".msg-assistant:not(.msg-live)")).to_have_count(1, timeout=TIMEOUT_MS)
    session_id = _session_id(a)
    b = _tab(browser, app)
    b.goto(f"{app.url}/?session={session_id}")
    expect(b.locator(".msg-user")).to_have_text(["first"])
    _send(a, "long answer please")
    expect(a.locator(".msg-live")).to_have_attribute("data-state", "streaming")

    _send(b, "me too")

    notice = b.locator(".live-elsewhere")
    expect(notice.locator("#follow-live")).to_be_visible()
    expect(b.locator("#chat-input")).to_have_value("me too")
    expect(b.locator(".msg-user")).to_have_text(["first"])  # not sent: not in the transcript
    expect(notice).to_have_class(re.compile(r"live-elsewhere-ended"), timeout=2 * TIMEOUT_MS)
    expect(notice.locator("#follow-live")).to_have_count(0)
    expect(b.locator(".msg-user")).to_have_text(["first", "long answer please"])
    expect(b.locator(".msg-assistant .md-body").last).to_have_text(long_answer(WORDS // 3))
    assert _bubbles(a) == _bubbles(b), "the other tab's answer is shown without a reload"

    b.click("#send")  # the text is still in the box
    expect(b.locator(".live-elsewhere")).to_have_count(0)
    expect(b.locator(".msg-user")).to_have_text(["first", "long answer please", "me too"])
    expect(b.locator(".msg-assistant:not(.msg-live)")).to_have_count(3, timeout=TIMEOUT_MS)
    a.context.close()
    b.context.close()
