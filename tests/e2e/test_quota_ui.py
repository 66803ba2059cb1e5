"""Tester findings of 2 Dec in a real browser, against the whole app (prod build): the daily limit a
user lowers can be raised back and asks first when it would stop their chats; today's bar is
labelled; a refused approval stays pending; the red button is the one that rejects; a conversation
that is not the user's says so.

``HITL_TOOLS=calculate`` makes the scripted model's calculation pause for approval.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env
from ventapp.billing.day import usage_day
from ventapp.i18n import formats

TIMEOUT_MS = 30_000
CEILING = "1000000"


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-quota")
    env = {
        **app_env(data_dir, llm.base_url),
        "DEMO_MODE": "1",
        "HITL_TOOLS": "calculate",
        "TFAGENTS_DAILY_TOKEN_LIMIT": CEILING,
    }
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


def _user() -> str:
    return f"q-{uuid.uuid4().hex[:6]}"


def _send(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#send")


def _save_limit(page: Page, value: str) -> None:
    page.fill("#quota-input", value)
    page.click("#quota-save")


def test_a_limit_below_todays_usage_asks_first_and_can_be_raised_back(
    browser: Browser, app: ReflexApp
) -> None:
    """Tester #1: 100,000 under 102,082 used was saved at once, and 200,000 back was refused."""
    page = open_chat(browser, app.url, _user(), TIMEOUT_MS, locale="zh-CN")
    _send(page, "hello")
    expect(page.locator(".msg-assistant .usage-footer")).to_contain_text("token", timeout=TIMEOUT_MS)
    page.goto(f"{app.url}/usage")
    line = page.get_by_text(re.compile("^今天已用"))  # "今天已用 812 / 1,000,000 token · 剩余 …"
    expect(line).to_contain_text("/ 1,000,000 token")

    # Tester (2 Dec): the ceiling showed only in the refusal of a limit above it.
    expect(page.locator("#quota-ceiling")).to_have_text(
        "你可以自己设置的上限：1,000,000 token（运维人员设定）"
    )

    _save_limit(page, "1")
    warning = page.locator("#quota-warning")
    expect(warning).to_contain_text("北京时间零点之前你将无法继续对话")
    page.click("#quota-cancel")
    expect(warning).to_have_count(0)
    expect(line).to_contain_text("/ 1,000,000 token")

    _save_limit(page, "1")
    page.click("#quota-confirm")
    expect(page.get_by_text("每日额度已设为 1 token。")).to_be_visible()
    expect(line).to_contain_text("/ 1 token · 剩余 0")

    _save_limit(page, CEILING)
    expect(page.get_by_text("每日额度已设为 1,000,000 token。")).to_be_visible()
    _save_limit(page, "1000001")
    expect(page.get_by_text(re.compile("你自己的每日额度最多可设为 1,000,000 token"))).to_be_visible()

    # Tester #11: the ticks ran 11/19 … 12/1, today's bar (the only one) unlabelled.
    today = formats.short_date(usage_day(), "zh-CN")
    ticks = page.locator("#usage-chart .recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value")
    expect(ticks.last).to_have_text(today)
    page.context.close()


def test_a_chat_refused_for_a_limit_the_user_lowered_links_to_the_usage_page(
    browser: Browser, app: ReflexApp
) -> None:
    """Tester (2 Dec): the refusal said "今天的 token 额度已用完，北京时间零点重置。" although the user had
    lowered the limit themselves and could raise it again on /usage."""
    user = _user()
    page = open_chat(browser, app.url, user, TIMEOUT_MS, locale="zh-CN")
    _send(page, "hello")
    expect(page.locator(".msg-assistant .usage-footer")).to_contain_text("token", timeout=TIMEOUT_MS)
    lowered = httpx.put(
        f"{app.url}/api/usage/quota", params={"user_name": user}, json={"daily_token_limit": 1}
    )
    assert lowered.status_code == 200, lowered.text
    _send(page, "hello again")
    callout = page.locator(".chat-error").last
    expect(callout).to_contain_text("你可以在用量页面把它调高，最多 1,000,000 token。", timeout=TIMEOUT_MS)
    callout.locator(".quota-usage-link").click()
    expect(page).to_have_url(re.compile(r"/usage$"))
    page.context.close()


def test_an_approval_refused_by_the_quota_stays_pending(browser: Browser, app: ReflexApp) -> None:
    """Tester #7: the card read "已由你批准" beside "等待你处理" after the quota refused 批准."""
    user = _user()
    page = open_chat(browser, app.url, user, TIMEOUT_MS)
    _send(page, "please calculate (12+8)*3")
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")
    lowered = httpx.put(
        f"{app.url}/api/usage/quota", params={"user_name": user}, json={"daily_token_limit": 1}
    )
    assert lowered.status_code == 200, lowered.text

    page.click("#approve-all")

    card = page.locator(".interrupt-card")
    expect(card.locator(".interrupt-error")).to_contain_text("today's token allowance")
    answer = page.locator(".msg-assistant").last
    expect(answer.locator(".tool-card")).to_contain_text("Waiting for you")
    expect(answer.get_by_text("Approved by you")).to_have_count(0)
    page.context.close()


def test_the_red_button_is_the_one_that_rejects(browser: Browser, app: ReflexApp) -> None:
    """Tester #10: after 拒绝… the undo was red and the button sending the rejection green."""
    page = open_chat(browser, app.url, _user(), TIMEOUT_MS)
    _send(page, "please calculate (12+8)*3")
    toggle, submit = page.locator(".reject-call"), page.locator("#approve-all")
    expect(toggle).to_have_attribute("data-accent-color", "red")
    expect(submit).to_have_attribute("data-accent-color", "teal")
    toggle.click()
    expect(toggle).to_have_attribute("data-accent-color", "gray")
    expect(submit).to_have_attribute("data-accent-color", "red")
    page.context.close()


def test_a_conversation_that_is_not_the_users_says_so(browser: Browser, app: ReflexApp) -> None:
    """Tester: ``/?session=<another user's id>`` showed an empty new chat, silently."""
    owner = open_chat(browser, app.url, _user(), TIMEOUT_MS)
    _send(owner, "hello")
    expect(owner).to_have_url(re.compile(r"[?&]session=[0-9a-f-]{36}"), timeout=TIMEOUT_MS)
    theirs = owner.url
    owner.context.close()

    page = open_chat(browser, app.url, _user(), TIMEOUT_MS)
    page.goto(theirs)
    expect(page.get_by_text("This conversation was not found")).to_be_visible()
    expect(page.locator(".msg-user")).to_have_count(0)
    page.context.close()
