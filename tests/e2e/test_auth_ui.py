"""Accounts in the Reflex UI (issue 15, AUTH_MODE=local), in a real browser against the whole app:
log in, chat, log out, and the back button shows no conversation; API keys on the settings page."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env
from ventapp.auth.service import create_account
from ventapp.db.engine import make_engine, upgrade_to_head
from ventapp.i18n import t

TIMEOUT_MS = 30_000
USER = "auth-e2e"
PASSWORD = "a long browser password"


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-auth")
    url = f"sqlite:///{data_dir / 'ventagent.db'}"
    upgrade_to_head(url)
    engine = make_engine(url)
    create_account(engine, USER, PASSWORD, "user")
    engine.dispose()
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1", "AUTH_MODE": "local"}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


@pytest.fixture
def page(browser: Browser, app: ReflexApp, llm: ScriptedServer) -> Iterator[Page]:
    llm.reset()
    tab = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US").new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    yield tab
    tab.context.close()


def _log_in(page: Page, url: str, password: str = PASSWORD) -> None:
    page.goto(url)
    expect(page).to_have_url(re.compile(r"/login"))
    page.fill("#login-user", USER)
    page.fill("#login-password", password)
    page.click("#login-submit")


def _lang(page: Page) -> str:
    """The login page's language once it follows the browser's (``en-US``, the page fixture's)."""
    expect(page.locator("h1")).to_have_text(t("auth.login_title", "en"))
    return "en"


def test_a_wrong_password_stays_on_the_login_page_with_a_sentence(page: Page, app: ReflexApp) -> None:
    """Tester: a wrong password also cleared the user name; only the password goes, and the
    error says why, in the page's language."""
    _log_in(page, app.url, "not the password")
    expect(page).to_have_url(re.compile(r"/login/?\?error=bad_credentials"))
    expect(page.locator("#login-error")).to_have_text(t("auth.error.bad_credentials", _lang(page)))
    expect(page.locator("#login-user")).to_have_value(USER)
    expect(page.locator("#login-password")).to_have_value("")
    assert page.context.cookies() == [] or all(
        c["name"] != "ventagent_session" for c in page.context.cookies()
    )


def test_log_in_chat_log_out_and_back_shows_no_conversation(page: Page, app: ReflexApp) -> None:
    _log_in(page, app.url)
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator("#user-chip")).to_have_text(USER)
    expect(page.locator("#user-name")).to_have_count(0)  # no name dialog: the server names the user
    cookie = next(c for c in page.context.cookies() if c["name"] == "ventagent_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"

    page.fill("#chat-input", "hello from a verified user")
    page.click("#send")
    expect(page.locator(".msg-assistant").last).to_contain_text("Hello", ignore_case=True)
    with httpx.Client(base_url=app.url, cookies={"ventagent_session": cookie["value"]}) as api:
        assert api.get("/api/sessions").json()["sessions"], "the API accepts the UI's session"

    page.click("#logout")
    expect(page).to_have_url(re.compile(r"/login"))
    with httpx.Client(base_url=app.url, cookies={"ventagent_session": cookie["value"]}) as api:
        assert api.get("/api/sessions").status_code == 401, "the session ended on the server"

    expect(page.locator("#login-notice")).to_have_text(t("auth.notice.logged_out", _lang(page)))
    page.go_back()
    # The chat page's login check sends the tab back here (with ``next``): a deliberate logout,
    # not "your login ended" (tester's item).
    expect(page).to_have_url(re.compile(r"/login\?next="))
    assert "reason=ended" not in page.url
    expect(page.locator("#login-notice")).to_have_text(t("auth.notice.logged_out", _lang(page)))
    expect(page.get_by_text("hello from a verified user")).to_have_count(0)
    expect(page.locator("#login-form")).to_be_visible()
    assert not re.search(r"next=(/|%2F)login", page.url), f"never back to the login page: {page.url}"


def test_a_tab_left_open_after_a_logout_elsewhere_sends_nothing(
    page: Page, app: ReflexApp, llm: ScriptedServer
) -> None:
    """Tester's item 1: a second tab of the same browser kept chatting as the user after tab A
    logged out (its websocket kept the identity it was given when its page loaded)."""
    _log_in(page, app.url)
    expect(page.locator("#user-chip")).to_have_text(USER)
    other = page.context.new_page()
    other.set_default_timeout(TIMEOUT_MS)
    other.goto(app.url)
    expect(other.locator("#user-chip")).to_have_text(USER)

    page.click("#logout")
    expect(page).to_have_url(re.compile(r"/login"))
    calls = len(llm.requests())
    other.fill("#chat-input", "still here after the logout?")
    other.click("#send")

    expect(other).to_have_url(re.compile(r"/login"))
    expect(other.locator("#login-form")).to_be_visible()
    assert len(llm.requests()) == calls, "no model call was made for the message"


def test_api_keys_are_created_shown_once_and_revoked_on_the_settings_page(page: Page, app: ReflexApp) -> None:
    _log_in(page, app.url)
    expect(page.locator("#user-chip")).to_have_text(USER)
    page.goto(f"{app.url}/settings")
    page.locator("#keys-card input[name='name']").fill("legacy page")
    page.click("#key-create")
    key = page.locator("#new-key").inner_text()
    assert key.startswith("va_")
    with httpx.Client(base_url=app.url, headers={"Authorization": f"Bearer {key}"}) as api:
        assert api.get("/api/auth/me").json()["user_name"] == USER
        page.locator(".key-revoke").first.click()
        expect(page.locator(".key-revoke")).to_have_count(0)
        assert api.get("/api/auth/me").status_code == 401
    page.reload()
    expect(page.locator("#new-key")).to_have_count(0)


def test_text_in_the_chat_box_survives_the_trip_to_login(
    page: Page, app: ReflexApp, llm: ScriptedServer
) -> None:
    """Tester: a message typed (and sent) after the login ended was lost on the way to /login; then
    the login came back to an empty new chat, not the conversation (``?session=``) it was in."""
    _log_in(page, app.url)
    expect(page.locator("#user-chip")).to_have_text(USER)
    page.fill("#chat-input", "first question of this conversation")
    page.click("#send")
    expect(page.locator(".msg-assistant").last).to_contain_text("Hello", ignore_case=True)
    expect(page).to_have_url(re.compile(r"\?session="))
    conversation = page.url
    other = page.context.new_page()
    other.set_default_timeout(TIMEOUT_MS)
    other.goto(app.url)
    expect(other.locator("#user-chip")).to_have_text(USER)
    other.click("#logout")  # this tab's login ends elsewhere
    expect(other).to_have_url(re.compile(r"/login"))

    draft = "Airflow in the return heading, please — 3 fans, 42 m³/s?"
    page.fill("#chat-input", draft)
    page.click("#send")
    expect(page).to_have_url(re.compile(r"/login\?next=.*session.*&reason=ended"))
    expect(page.locator("#login-notice")).to_be_visible()
    page.fill("#login-user", USER)
    page.fill("#login-password", PASSWORD)
    page.click("#login-submit")
    expect(page.locator("#user-chip")).to_have_text(USER)
    expect(page).to_have_url(conversation)
    expect(page.get_by_text("first question of this conversation", exact=True)).to_be_visible()
    expect(page.locator("#chat-input")).to_have_value(draft)
    page.reload()  # used up: it is not put back twice
    expect(page.locator("#user-chip")).to_have_text(USER)
    expect(page.locator("#chat-input")).to_have_value("")


def test_a_sidebar_action_after_the_login_ended_keeps_the_draft_too(page: Page, app: ReflexApp) -> None:
    """Tester: Send kept the chat box's text across the trip to /login; a sidebar action did not."""
    _log_in(page, app.url)
    expect(page.locator("#user-chip")).to_have_text(USER)
    page.fill("#chat-input", "a question for the sidebar test")
    page.click("#send")
    expect(page.locator(".msg-assistant").last).to_contain_text("Hello", ignore_case=True)
    other = page.context.new_page()
    other.set_default_timeout(TIMEOUT_MS)
    other.goto(app.url)
    expect(other.locator("#user-chip")).to_have_text(USER)
    other.click("#logout")  # this tab's login ends elsewhere
    expect(other).to_have_url(re.compile(r"/login"))

    draft = "unsent: the fan curve at 1,450 rpm"
    page.fill("#chat-input", draft)
    page.locator(".session-item").first.locator(".session-menu").click()
    page.locator(".session-pin").click()
    expect(page).to_have_url(re.compile(r"/login\?next=.*&reason=ended"))
    page.fill("#login-user", USER)
    page.fill("#login-password", PASSWORD)
    page.click("#login-submit")
    expect(page.locator("#user-chip")).to_have_text(USER)
    expect(page.locator("#chat-input")).to_have_value(draft)


def test_the_login_page_has_the_language_and_colour_switches(page: Page, app: ReflexApp) -> None:
    page.goto(f"{app.url}/login")
    expect(page.locator("#login-form")).to_be_visible()
    expect(page.locator("#color-mode")).to_be_visible()
    page.click("#lang-switch")
    page.get_by_role("option", name="English").click()
    expect(page.locator("h1")).to_have_text("Log in to VentAgent")
    page.click("#lang-switch")
    page.get_by_role("option", name="中文").click()
    expect(page.locator("h1")).not_to_have_text("Log in to VentAgent")
