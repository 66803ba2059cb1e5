"""The standard chat controls in a real browser against the whole app: copy, regenerate, edit and
resend, retry — each proven on the scripted model's request log and on the stored history (reload).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.script import MARKDOWN_ANSWER
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
SESSION_IN_URL = re.compile(r"[?&]session=([0-9a-f-]{36})")
OPERATOR = "quota-operator"
"""May raise a user's quota above their ceiling (a user may set their own only up to it)."""


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-controls")
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1", "AUTH_NONE_OPERATORS": OPERATOR}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


def _open(browser: Browser, app: ReflexApp, user: str) -> Page:
    tab = open_chat(browser, app.url, user, TIMEOUT_MS)
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app.url)
    return tab


def _send(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#send")


def _answered(page: Page, count: int, text: str) -> None:
    answers = page.locator(".msg-assistant:not(.msg-live)")
    expect(answers).to_have_count(count)
    expect(answers.last).to_contain_text(text)
    expect(page.locator("#send")).to_be_visible()


def _exchange(page: Page, text: str, count: int, answer: str) -> None:
    """Send ``text`` and wait until the transcript holds ``count`` finished answers, the last with ``answer``."""
    _send(page, text)
    _answered(page, count, answer)


def _user_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m.get("role") == "user"]


def _transcript(page: Page) -> list[str]:
    return page.locator(".msg-user").all_inner_texts()


def test_copy_puts_the_answer_and_each_code_block_on_the_clipboard(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    llm.reset()
    page = _open(browser, app, "copy-e2e")
    _exchange(page, "markdown please", 1, "Ventilation overview")
    page.locator(".msg-assistant .copy-answer").click()
    assert page.evaluate("navigator.clipboard.readText()") == MARKDOWN_ANSWER.rstrip("\n")
    page.locator(".msg-assistant .copy-code").first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("def airflow(") and "return volume_m3 * ach" in copied and "|" not in copied
    # The code block's button is named in the page's language only, and follows a switch.
    block = page.locator(".msg-assistant .copy-code").first
    expect(block).to_have_accessible_name("Copy code")
    page.click("#lang-switch")
    page.get_by_role("option", name="中文").click()
    expect(block).to_have_accessible_name("复制代码")
    page.context.close()


def test_regenerate_replaces_the_last_answer(browser: Browser, app: ReflexApp, llm: ScriptedServer) -> None:
    llm.reset()
    page = _open(browser, app, "regen-e2e")
    _exchange(page, "hello one", 1, "You said: hello one")
    llm.push({"content": "A second take."})

    page.locator(".msg-assistant .regenerate").click()

    _answered(page, 1, "A second take.")
    assert _user_texts(llm.requests()[-1]) == ["hello one"], "the model sees the turn once, not re-sent"
    assert len([m for m in llm.requests()[-1]["messages"] if m.get("role") == "assistant"]) == 0
    page.reload()
    _answered(page, 1, "A second take.")
    assert _transcript(page) == ["hello one"]
    page.context.close()


def test_edit_a_sent_message_forks_the_conversation(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    llm.reset()
    page = _open(browser, app, "edit-e2e")
    _exchange(page, "first question", 1, "You said: first question")
    _exchange(page, "second question", 2, "You said: second question")

    page.locator(".msg-user").first.hover()
    page.locator(".edit-message").first.click()
    page.fill(".edit-form textarea", "first, edited")
    page.click(".edit-send")

    _answered(page, 1, "You said: first, edited")
    assert _transcript(page) == ["first, edited"]
    assert _user_texts(llm.requests()[-1]) == ["first, edited"], "forked before the first turn"
    page.reload()
    _answered(page, 1, "You said: first, edited")
    assert _transcript(page) == ["first, edited"]
    page.context.close()


def _box_size(page: Page) -> dict[str, float]:
    return page.locator(".edit-form textarea").evaluate(
        "e => ({client: e.clientHeight, scroll: e.scrollHeight,"
        " line: parseFloat(getComputedStyle(e).lineHeight)})"
    )


def test_the_edit_box_grows_with_a_long_message_then_scrolls(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    """F11: a 15-line message opened for editing sat in a 70 px box, three lines at a time."""
    llm.reset()
    page = _open(browser, app, "edit-tall-e2e")
    fifteen = "\n".join(f"line {i}" for i in range(1, 16))
    _send(page, fifteen)
    answer = page.locator(".msg-assistant:not(.msg-live)")
    expect(answer).to_have_count(1)
    expect(page.locator("#send")).to_be_visible()
    assert "You said: line 1\nline 2\nline 3" in answer.inner_text(), "the demo's echo keeps line breaks"

    page.locator(".msg-user").first.hover()
    page.locator(".edit-message").first.click()
    box = page.locator(".edit-form textarea")
    expect(box).to_have_value(fifteen)
    size = _box_size(page)
    assert size["client"] >= 15 * size["line"], size
    assert size["scroll"] <= size["client"], f"all 15 lines show without scrolling: {size}"

    box.fill(fifteen + "".join(f"\nmore {i}" for i in range(40)))
    size = _box_size(page)
    assert 18 * size["line"] <= size["client"] <= 22 * size["line"], f"grows to about 20 lines: {size}"
    assert size["scroll"] > size["client"], f"then scrolls: {size}"

    box.fill("short")
    size = _box_size(page)
    assert 3 * size["line"] <= size["client"] <= 5 * size["line"], f"shrinks back to three lines: {size}"

    # try20: the edit box took 120,000 pasted characters, then refused the message with no reason
    notice = page.locator("#edit-full")
    expect(notice).to_be_hidden()
    box.press("Control+a")
    page.keyboard.insert_text("x" * 100_010)
    assert box.evaluate("el => el.value.length") == 100_000
    expect(notice).to_be_visible()
    page.context.close()


def test_the_edit_form_shows_the_attachment_it_resends_and_it_can_be_left_out(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    """Issue 12: the edit box hid the file that went with the edited message."""
    llm.reset()
    page = _open(browser, app, "edit-attach-e2e")
    page.locator(".attach-upload input[type=file]").set_input_files(
        files=[{"name": "fan.csv", "mimeType": "text/csv", "buffer": b"q,p\n12,340\n"}]
    )
    expect(page.locator(".attachment-chip")).to_have_count(1)
    _exchange(page, "first question", 1, "You said: first question")

    page.locator(".msg-user").first.hover()
    page.locator(".edit-message").first.click()
    chip = page.locator(".edit-form .edit-attachment")
    expect(chip).to_have_attribute("data-path", "/workspace/uploads/fan.csv")
    chip.locator(".edit-attachment-remove").click()
    expect(chip).to_have_count(0)
    page.fill(".edit-form textarea", "first, without the file")
    page.click(".edit-send")

    _answered(page, 1, "You said: first, without the file")
    assert _user_texts(llm.requests()[-1]) == ["first, without the file"], "the file was left out"
    page.reload()
    _answered(page, 1, "You said: first, without the file")
    expect(page.locator(".user-row .sent-attachment")).to_have_count(0)
    page.context.close()


def test_a_refused_message_keeps_its_text_and_retry_sends_it(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    llm.reset()
    user = "retry-e2e"
    page = _open(browser, app, user)
    _exchange(page, "hello before the quota", 1, "You said: hello before the quota")
    quota = f"{app.url}/api/usage/quota"
    assert httpx.put(quota, params={"user_name": user}, json={"daily_token_limit": 1}).status_code == 200

    _send(page, "after the quota")

    expect(page.locator(".msg-assistant").last.locator(".chat-error")).to_be_visible()
    expect(page.locator("#chat-input")).to_have_value("after the quota")  # not lost
    expect(page.locator(".user-row.unsent .unsent-badge")).to_have_count(1)
    refusal = page.locator(".msg-assistant").last.locator(".chat-error").text_content() or ""
    # Tester: after F5 the marked message, its Retry and the text in the box were all gone.
    kept = "sessionStorage.getItem('ventagent_unsent') || ''"
    page.wait_for_function(f"({kept}).includes('after the quota')")  # kept in the tab, not on the server
    page.reload()
    expect(page.locator(".user-row.unsent .unsent-badge")).to_have_count(1)
    expect(page.locator(".user-row.unsent")).to_contain_text("after the quota")
    expect(page.locator(".msg-assistant").last.locator(".chat-error")).to_have_text(refusal)
    expect(page.locator("#chat-input")).to_have_value("after the quota")
    sent = len(llm.requests())
    raised = httpx.put(quota, params={"user_name": OPERATOR}, json={"daily_token_limit": 0, "for_user": user})
    assert raised.status_code == 200

    page.click(".retry-send")

    _answered(page, 2, "You said: after the quota")
    expect(page.locator(".unsent-badge")).to_have_count(0)
    expect(page.locator("#chat-input")).to_have_value("")
    assert len(llm.requests()) == sent + 1
    assert _user_texts(llm.requests()[-1]) == ["hello before the quota", "after the quota"]
    assert page.evaluate(kept) == "", "sent: nothing kept any more"
    page.reload()
    _answered(page, 2, "You said: after the quota")
    expect(page.locator(".unsent-badge")).to_have_count(0)
    page.context.close()


def test_retry_only_after_an_error_sending_again_can_help(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    llm.reset()
    page = _open(browser, app, "fail-e2e")
    llm.push({"error": 401, "message": "Incorrect API key provided."})
    _send(page, "wrong key")  # HTTP 401: model_error, which needs the settings changed first

    for _ in ("live", "reloaded"):
        expect(page.locator(".msg-assistant").last).to_have_attribute("data-state", "error")
        expect(page.locator(".msg-user").last).to_contain_text("wrong key")  # the text stays
        expect(page.locator(".retry-answer, .regenerate")).to_have_count(0)
        page.reload()

    # Tester: "error please" (HTTP 500) read "refused to work with the current settings", no Retry.
    _send(page, "error please")  # HTTP 500: model_failed, the server's own failure, which may pass
    expect(page.locator(".msg-assistant").last).to_have_attribute("data-state", "error")
    expect(page.locator(".chat-error").last).to_contain_text("failed on its side")
    expect(page.locator(".retry-answer")).to_have_count(1)

    llm.push({"error": 503, "message": "The server is overloaded."}, {"content": "Back again."})
    _send(page, "and now?")  # HTTP 503: model_busy, worth another try
    expect(page.locator(".msg-assistant").last).to_have_attribute("data-state", "error")
    expect(page.locator(".msg-user").last).to_contain_text("and now?")

    page.click(".retry-answer")

    _answered(page, 3, "Back again.")
    assert _user_texts(llm.requests()[-1])[-1] == "and now?"
    page.context.close()


def test_phone_layout_drawer_searches_renames_pins_and_deletes(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    llm.reset()
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app.url)
    page.locator("#user-name").fill("phone-e2e")
    page.click("#user-name-save")
    expect(page.locator("#user-name")).to_have_count(0)
    expect(page.locator(".chat-sidebar")).to_be_hidden()
    _exchange(page, "phone chat one", 1, "You said: phone chat one")

    page.click("#history-menu")
    drawer = page.locator(".phone-history")
    row = drawer.locator(".session-item")
    expect(row).to_have_count(1)
    for turn, pinned in enumerate(("true", "false", "true")):  # after each (un)pin, one click opens the menu
        row.locator(".session-menu").click()
        page.locator(".session-pin").click()
        expect(row).to_have_attribute("data-pinned", pinned)
        row.locator(".session-menu").click()
        expect(page.locator(".session-rename")).to_be_visible(timeout=3_000)
        if turn < 2:
            page.keyboard.press("Escape")
            expect(page.locator("[role=menu]")).to_have_count(0)
    page.locator(".session-rename").click()
    page.fill("#rename-input", "Phone fan room")
    page.click("#rename-save")
    expect(row.locator(".session-title")).to_have_text("Phone fan room")
    drawer.locator("#session-search-phone").fill("no such title")
    expect(drawer).to_contain_text("No conversation matches.")
    drawer.locator("#session-search-phone").fill("")
    expect(row).to_have_count(1)
    row.locator(".session-menu").click()
    page.locator(".session-delete").click()
    page.click("#delete-confirm")
    expect(drawer.locator(".session-item")).to_have_count(0)
    page.context.close()


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_header_fits_a_phone_screen(browser: Browser, app: ReflexApp, locale: str) -> None:
    """Found by trying it: at 390 px the colour-mode button sat at x = 406–442, out of reach."""
    page = browser.new_context(viewport={"width": 390, "height": 844}, locale=locale).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app.url)
    expect(page.locator("#color-mode")).to_be_visible()
    overflow = page.evaluate(
        """() => [...document.querySelectorAll('#color-mode, #lang-switch, #new-chat, #usage-link')]
            .filter(el => el.getBoundingClientRect().right > window.innerWidth + 0.5)
            .map(el => el.id)"""
    )
    assert overflow == [], f"header controls off a 390 px screen ({locale}): {overflow}"
    page.context.close()


_LEDGER_FIT = """() => {
    const card = document.getElementById('ledger-table');
    const table = card.querySelector('table');
    let scroller = table.parentElement;
    while (scroller !== card && !(scroller.scrollWidth > scroller.clientWidth + 1
            && ['auto', 'scroll'].includes(getComputedStyle(scroller).overflowX))) {
        scroller = scroller.parentElement;
    }
    const right = () => [...table.querySelectorAll('th')].at(-1).getBoundingClientRect().right;
    const before = right();
    if (scroller !== card) scroller.scrollLeft = scroller.scrollWidth;
    return {
        scrolls: scroller !== card,
        page_width: document.documentElement.scrollWidth,
        card_right: card.getBoundingClientRect().right,
        last_before: before,
        last_after: right(),
        wrapped_time: table.querySelector('td').getBoundingClientRect().height > 40,
    };
}"""


def test_the_ledger_scrolls_inside_its_card_on_a_phone(browser: Browser, app: ReflexApp) -> None:
    """Tester (98_mobile_usage): at 390 px the ledger was cut off at the 输出 column."""
    page = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN").new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app.url)
    page.locator("#user-name").fill("phone-ledger")
    page.click("#user-name-save")
    expect(page.locator("#user-name")).to_have_count(0)
    _exchange(page, "hello", 1, "hello")
    page.goto(f"{app.url}/usage")
    expect(page.locator(".ledger-row").first).to_be_visible()
    fit = page.evaluate(_LEDGER_FIT)
    assert fit["scrolls"], f"no horizontal scroller between the table and its card: {fit}"
    assert fit["page_width"] <= 390, f"the page itself is wider than the phone: {fit}"
    assert fit["last_before"] > fit["card_right"], f"the table fits without scrolling: {fit}"
    assert fit["last_after"] <= fit["card_right"] + 0.5, f"scrolled to the end, the last column is cut: {fit}"
    assert not fit["wrapped_time"], f"the time column wraps instead of scrolling: {fit}"
    # The chart's day labels (80_quota_set): one fixed step apart, the last one today's.
    expect(page.locator("#usage-chart svg text").first).to_be_visible()
    days = page.evaluate(
        """() => [...document.querySelectorAll('#usage-chart svg text')]
            .filter((label) => /^\\d+\\/\\d+$/.test(label.textContent.trim()))
            .map((label) => { const box = label.getBoundingClientRect(); return [label.textContent.trim(), box.x + box.width / 2]; })"""
    )
    steps = {round(b[1] - a[1]) for a, b in itertools.pairwise(days)}
    assert len(days) >= 3 and max(steps) - min(steps) <= 2, f"uneven day labels: {days}"
    page.context.close()


def test_page_titles_follow_the_language(browser: Browser, app: ReflexApp) -> None:
    page = browser.new_context(locale="zh-CN").new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{app.url}/usage")
    expect(page).to_have_title("用量 · VentAgent")
    page.click("#lang-switch")
    page.get_by_role("option", name="English").click()
    expect(page).to_have_title("Usage · VentAgent")
    page.goto(app.url)
    expect(page).to_have_title("VentAgent")
    page.context.close()


_GAP_TO_TOP = """(index) => {
    const transcript = document.getElementById('transcript');
    transcript.scrollTop = transcript.scrollHeight;
    const bubble = document.querySelectorAll('.msg-user')[index];
    return bubble.getBoundingClientRect().top - transcript.getBoundingClientRect().top;
}"""
_EDIT_BOX_IN_TRANSCRIPT = """async () => {
    for (let i = 0; i < 4; i++) await new Promise((done) => requestAnimationFrame(done));
    await new Promise((done) => setTimeout(done, 200));
    const box = document.getElementById('edit-form').getBoundingClientRect();
    const area = document.getElementById('transcript').getBoundingClientRect();
    return {box: [box.top, box.bottom], area: [area.top, area.bottom]};
}"""


def _bubble_just_below_the_top(page: Page, index: int) -> None:
    """Size the window so that, scrolled to its end, the transcript shows user bubble ``index`` at its top."""
    for _ in range(4):
        gap = float(page.evaluate(_GAP_TO_TOP, index))
        if 4 <= gap <= 30:
            return
        size = page.viewport_size or {"width": 1280, "height": 900}
        page.set_viewport_size({"width": size["width"], "height": int(size["height"] - gap + 12)})
        page.wait_for_timeout(100)  # the transcript follows the new size (a resize observer)
    pytest.fail(f"could not place the bubble at the transcript's top (gap {gap} px)")


def test_the_edit_box_of_an_earlier_message_opens_fully_in_view(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    """Tester: editing an earlier message, the box (taller than the bubble) went partly off the top."""
    llm.reset()
    page = _open(browser, app, "edit-scroll-e2e")
    _exchange(page, "first question", 1, "You said: first question")
    _exchange(page, "long answer please", 2, "pollutants")
    _bubble_just_below_the_top(page, 1)  # the transcript is at its end, as after an answer

    page.locator(".edit-message").nth(1).click()

    expect(page.locator(".edit-form textarea")).to_have_value("long answer please")
    shown = page.evaluate(_EDIT_BOX_IN_TRANSCRIPT)
    (top, bottom), (area_top, area_bottom) = shown["box"], shown["area"]
    assert area_top - 1 <= top and bottom <= area_bottom + 1, f"edit box {shown['box']} in {shown['area']}"
    page.context.close()


def test_a_refused_edit_shows_the_conversation_again_with_its_text_in_the_box(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    """Tester: a refused edit left the edited turn and what followed removed until a reload."""
    llm.reset()
    user = "edit-refused-e2e"
    page = _open(browser, app, user)
    _exchange(page, "first question", 1, "You said: first question")
    _exchange(page, "second question", 2, "You said: second question")
    quota = f"{app.url}/api/usage/quota"
    assert httpx.put(quota, params={"user_name": user}, json={"daily_token_limit": 1}).status_code == 200
    sent = len(llm.requests())

    page.locator(".edit-message").first.click()
    page.fill(".edit-form textarea", "first, edited")
    page.click(".edit-send")

    expect(page.locator(".resend-refused")).to_contain_text("Nothing was sent")
    expect(page.locator(".edit-form textarea")).to_have_value("first, edited")
    expect(page.locator(".msg-assistant:not(.msg-live)")).to_have_count(2)
    assert _transcript(page) == ["second question"], "every turn is back (the first one in its box)"
    expect(page.locator(".unsent-badge")).to_have_count(0)
    assert len(llm.requests()) == sent
    page.context.close()
