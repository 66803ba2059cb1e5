"""Sessions in the Reflex UI, in a real browser: sidebar search, rename, pin, delete, reload, attach, mode.

One app for the module (the prod build takes ~30 s to start); the steps build on each
other, so they run as one story in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import chromium, open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
USER = "sessions-e2e"


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-sessions")
    with ReflexApp({**app_env(data_dir, llm.base_url), "DEMO_MODE": "1"}, data_dir / "reflex.log") as running:
        yield running


@pytest.fixture(scope="module")
def page(app: ReflexApp) -> Iterator[Page]:
    with chromium() as browser:
        yield _open(browser, app)


def _open(browser: Browser, app: ReflexApp) -> Page:
    return open_chat(browser, app.url, USER, TIMEOUT_MS)


def _send(page: Page, text: str, answers_before: int) -> None:
    page.fill("#chat-input", text)
    page.click("#send")
    expect(page.locator(".msg-assistant:not(.msg-live)")).to_have_count(answers_before + 1)
    expect(page.locator("#send")).to_be_enabled()


def _item(page: Page, title: str):  # type: ignore[no-untyped-def]  # a Playwright Locator
    return page.locator(
        ".session-item", has=page.locator(".session-title", has_text=re.compile(f"^{title}$"))
    )


def _menu(page: Page, title: str, action: str) -> None:
    _item(page, title).locator(".session-menu").click()
    page.locator(f".session-{action}").click()


def _titles(page: Page) -> list[str]:
    return page.locator(".session-item .session-title").all_inner_texts()


SESSION_IN_URL = re.compile(r"[?&]session=([0-9a-f-]{36})")


def _session_in_url(page: Page, expected: str | None = None) -> str:
    """The session id in the address bar, once the page has put it there (and it is ``expected``)."""
    wanted = re.compile(rf"[?&]session={expected}") if expected else SESSION_IN_URL
    expect(page).to_have_url(wanted)
    match = SESSION_IN_URL.search(page.url)
    assert match, page.url
    return match.group(1)


def test_sessions_story(page: Page, app: ReflexApp, llm: ScriptedServer) -> None:
    llm.reset()
    # Two chats.
    _send(page, "first chat about fans", 0)
    first_id = _session_in_url(page)
    page.click("#new-chat")
    expect(page.locator(".msg-user")).to_have_count(0)
    _send(page, "second chat about ducts", 0)
    expect(page.locator(".session-item")).to_have_count(2)
    assert _titles(page) == ["second chat about ducts", "first chat about fans"]

    # Search by title (case-insensitive), then clear.
    page.fill("#session-search", "FANS")
    expect(page.locator(".session-item")).to_have_count(1)
    expect(page.locator(".session-item .session-title")).to_have_text("first chat about fans")
    page.fill("#session-search", "no such chat")
    expect(page.locator(".session-item")).to_have_count(0)
    page.fill("#session-search", "")
    expect(page.locator(".session-item")).to_have_count(2)

    # Rename, pin (pinned goes first), delete with confirmation.
    _menu(page, "first chat about fans", "rename")
    page.fill("#rename-input", "  Fan room A  ")
    page.click("#rename-save")
    expect(_item(page, "Fan room A")).to_have_count(1)
    _menu(page, "Fan room A", "pin")
    expect(page.locator(".session-item").first).to_have_attribute("data-pinned", "true")
    assert _titles(page) == ["Fan room A", "second chat about ducts"]
    _menu(page, "second chat about ducts", "delete")
    page.click("#delete-cancel")
    expect(page.locator(".session-item")).to_have_count(2)
    _menu(page, "second chat about ducts", "delete")
    page.click("#delete-confirm")
    expect(page.locator(".session-item")).to_have_count(1)
    expect(page.locator(".msg-user")).to_have_count(0)  # the deleted chat was open: it is gone

    # Open the remaining chat; a reload keeps it open and the sidebar unchanged.
    _item(page, "Fan room A").locator(".session-title").click()
    expect(page.locator(".msg-user")).to_have_text(["first chat about fans"])
    _session_in_url(page, first_id)
    page.reload()
    expect(page.locator(".msg-user")).to_have_text(["first chat about fans"])
    expect(page.locator(".session-item")).to_have_count(1)
    expect(page.locator(".session-item").first).to_have_attribute("data-pinned", "true")
    expect(page.locator(".session-item .session-title")).to_have_text("Fan room A")
    _session_in_url(page, first_id)

    # Attach a file; the agent lists it.
    page.locator(".attach-upload input[type=file]").set_input_files(
        files=[{"name": "airflow notes.txt", "mimeType": "text/plain", "buffer": b"Q = 12 m3/s"}]
    )
    expect(page.locator(".attachment-chip")).to_have_count(1)
    llm.push(
        {"tool_calls": [{"name": "ls", "arguments": {"path": "/workspace/uploads"}}]},
        {"content": "You uploaded one file."},
    )
    _send(page, "which files did I attach?", 1)
    answer = page.locator(".msg-assistant").last
    expect(answer.locator(".tool-card .tool-result")).to_contain_text("/workspace/uploads/airflow notes.txt")
    expect(page.locator(".attachment-chip")).to_have_count(0)
    prompt = " ".join(str(m.get("content")) for m in llm.requests()[-2]["messages"])
    assert "/workspace/uploads/airflow notes.txt" in prompt

    # The mode switch is the session's mode.
    page.locator("#mode-switch").get_by_role("radio", name="Plan first").click()
    mode_url = f"{app.url}/api/sessions/{first_id}/mode"
    expected = {"session_id": first_id, "mode": "plan"}
    for _ in range(50):
        if httpx.get(mode_url, params={"user_name": USER}).json() == expected:
            break
        page.wait_for_timeout(100)
    assert httpx.get(mode_url, params={"user_name": USER}).json() == expected


def test_attach_before_the_first_message_starts_the_session_with_it(page: Page, llm: ScriptedServer) -> None:
    llm.reset()
    page.click("#new-chat")
    expect(page.locator(".msg-user")).to_have_count(0)
    page.locator(".attach-upload input[type=file]").set_input_files(
        files=[{"name": "fan.csv", "mimeType": "text/csv", "buffer": b"q,p\n1,2\n"}]
    )
    expect(page.locator(".attachment-chip")).to_have_count(1)
    llm.push(
        {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "/workspace/uploads/fan.csv"}}]},
        {"content": "The file has one row."},
    )
    _send(page, "read my csv", 0)
    expect(page.locator(".msg-assistant").last.locator(".tool-result")).to_contain_text("q,p")
    expect(page.locator(".session-item")).to_have_count(2)
    assert _titles(page)[1] == "read my csv", "pinned first, then the new chat"


def test_deleting_a_conversation_that_is_answering_says_so_and_stops_it_first(
    page: Page, app: ReflexApp, llm: ScriptedServer
) -> None:
    """Issue 12: the dialog asked to confirm, then refused because the conversation was answering."""
    browser = page.context.browser
    assert browser is not None
    tab = open_chat(browser, app.url, "delete-running-e2e", TIMEOUT_MS)
    llm.app.state.scripted.delay_ms = 100  # the answer streams for a while (about 20 s)
    try:
        tab.fill("#chat-input", "long answer please")
        tab.click("#send")
        expect(tab.locator(".msg-live")).to_contain_text("Ventilation systems move fresh air")
        expect(tab.locator("#stop")).to_be_visible()
        _menu(tab, "long answer please", "delete")
    finally:
        llm.app.state.scripted.delay_ms = 0
    expect(tab.get_by_role("alertdialog")).to_contain_text("is answering right now")
    expect(tab.locator("#delete-confirm")).to_have_text("Stop and delete")
    tab.click("#delete-confirm")

    expect(_item(tab, "long answer please")).to_have_count(0)
    expect(tab.locator(".msg-user, .msg-assistant")).to_have_count(0)  # it was open: the chat is empty
    expect(tab.locator("#send")).to_be_visible()
    tab.reload()
    expect(tab.locator("#user-chip")).to_contain_text("delete-running-e2e")
    expect(tab.locator(".session-item")).to_have_count(0)
    tab.context.close()
