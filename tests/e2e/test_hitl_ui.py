"""Approvals, reload and Stop in the Reflex UI, in a real browser, against the whole app (prod build).

``HITL_TOOLS=calculate`` makes the scripted model's calculation pause for approval. The
scripted model streams with a 30 ms pause between chunks so that a long answer can be
stopped half-way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
USER = "hitl-e2e"
CALCULATION = "please calculate (12+8)*3"
SESSION_IN_URL = re.compile(r"[?&]session=([0-9a-f-]{36})")


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    """This module's scripted model: chunks 30 ms apart (a long answer takes seconds)."""
    with ScriptedServer(delay_ms=30) as server:
        yield server


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-hitl")
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1", "HITL_TOOLS": "calculate"}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


def _open(browser: Browser, url: str) -> Page:
    return open_chat(browser, url, USER, TIMEOUT_MS)


@pytest.fixture
def page(browser: Browser, app: ReflexApp, llm: ScriptedServer) -> Iterator[Page]:
    llm.reset()
    tab = _open(browser, app.url)
    yield tab
    tab.context.close()


def _send(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#send")


def _paused_card(page: Page) -> None:
    _send(page, CALCULATION)
    card = page.locator(".msg-assistant .interrupt-card")
    expect(card).to_have_attribute("data-kind", "tool_approval")
    expect(card.locator(".approval-call")).to_have_count(1)
    expect(card.locator(".approval-args")).to_contain_text("(12+8)*3")
    # Worded from the request's reason_code in the page's language (the English sentence is the API's).
    expect(card.locator(".approval-reason")).to_have_text("Calculator needs your approval before it runs.")
    expect(page.locator("#approve-all")).to_have_text(re.compile(r"^\s*Approve\s*$"))
    # Tester: the header showed the raw name; the catalogue's leads, the raw one stays small.
    expect(card.locator(".approval-tool")).to_have_text("Calculator")
    expect(card.locator(".approval-tool-name")).to_have_text("calculate")
    expect(page.locator("#approve-all .submit-icon-check")).to_have_count(1)


def test_sending_while_a_card_waits_asks_first_then_drops_the_call_quietly(
    browser: Browser, app: ReflexApp
) -> None:
    # open_chat waits for the page's load event: a message sent before it can be lost (a CI flake).
    page = open_chat(browser, app.url, "hitl-drop", TIMEOUT_MS, locale="zh-CN")
    _send(page, "请计算 (12+8)*3")
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")
    expect(page.locator(".approval-reason")).to_have_text("计算器需要你批准后才会运行。")
    expect(page.locator(".approval-call .approval-tool")).to_have_text("计算器")

    _send(page, "算了，换个问题")
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_contain_text("待确认的调用将被作废")
    page.click("#drop-cancel")
    expect(dialog).to_have_count(0)
    expect(page.locator("#chat-input")).to_have_value("算了，换个问题")  # the text is kept
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")

    page.click("#send")
    page.click("#drop-confirm")

    expect(page.locator(".msg-assistant[data-state='done']")).to_have_count(1)
    expect(page.locator("#chat-input")).to_have_value("")

    def expect_dropped() -> None:
        dropped = page.locator(".msg-assistant").first
        expect(dropped).to_have_attribute("data-state", "dropped")
        expect(dropped.locator(".chat-notice")).to_contain_text("待确认的调用已作废")
        expect(dropped.locator(".tool-card")).to_have_attribute("data-state", "dropped")
        expect(dropped.locator(".tool-card")).to_contain_text("已作废")
        expect(dropped.locator(".tool-card")).not_to_contain_text(re.compile("失败|等待你"))
        expect(page.locator(".chat-error, .interrupt-card, #waiting-badge, .waiting-mark")).to_have_count(0)

    expect_dropped()
    footer = page.locator(".msg-assistant").first.locator(".usage-footer")
    expect(footer).to_contain_text("token")  # the paused part's usage, live too (issue 12)
    live_footer = footer.inner_text()
    page.reload()  # identical after a reload
    expect(page.locator(".msg-assistant")).to_have_count(2)
    expect_dropped()
    expect(footer).to_have_text(live_footer)
    page.context.close()


def test_editing_a_message_while_a_card_waits_asks_first(browser: Browser, app: ReflexApp) -> None:
    """Issue 12: an edit replaced the paused turn without the dialog a plain send shows."""
    # Ready before sending (open_chat): a message typed while the page still loads can be lost.
    page = open_chat(browser, app.url, "hitl-edit", TIMEOUT_MS, locale="zh-CN")
    _send(page, "请计算 (12+8)*3")
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")

    page.locator(".msg-user").first.hover()
    page.locator(".edit-message").first.click()
    page.fill(".edit-form textarea", "请计算 2*21")
    page.click(".edit-send")
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_contain_text("现在重新发送，待确认的调用将被作废")
    page.click("#drop-cancel")
    expect(dialog).to_have_count(0)
    expect(page.locator(".edit-form textarea")).to_have_value("请计算 2*21")  # the edit stays open
    expect(page.locator(".interrupt-card .approval-args")).to_contain_text("(12+8)*3")

    page.click(".edit-send")
    page.click("#drop-confirm")
    expect(page.locator(".msg-user")).to_have_text(["请计算 2*21"])
    expect(page.locator(".interrupt-card .approval-args")).to_contain_text("2*21")
    expect(page.locator(".msg-assistant[data-state='dropped']")).to_have_count(0)
    page.context.close()


def test_regenerate_in_a_tab_that_never_saw_another_tabs_card_drops_nothing(
    browser: Browser, app: ReflexApp
) -> None:
    """Tester's report: tab A's regenerate dropped tab B's pending approval without asking."""
    first = open_chat(browser, app.url, "hitl-twotab", TIMEOUT_MS, locale="zh-CN")
    _send(first, "你好")
    expect(first.locator(".msg-assistant[data-state='done']")).to_have_count(1)
    match = SESSION_IN_URL.search(first.url)
    assert match
    second = first.context.new_page()  # the same browser, another tab on the session
    second.set_default_timeout(TIMEOUT_MS)
    second.goto(f"{app.url}/?session={match.group(1)}")
    expect(second.locator(".msg-assistant[data-state='done']")).to_have_count(1)
    _send(second, "请计算 (12+8)*3")
    expect(second.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")

    first.locator(".msg-assistant .regenerate").click()  # this tab still shows only the 你好 turn

    expect(first.locator(".interrupt-error")).to_contain_text("没有发出：这个对话在另一个标签页")
    expect(first.locator(".msg-user")).to_have_text(["你好", "请计算 (12+8)*3"])  # read again, card and all
    expect(first.get_by_role("alertdialog")).to_have_count(0)
    second.click("#approve-all")  # the pending call was not dropped: it still answers
    expect(second.locator(".msg-assistant[data-state='done']")).to_have_count(2)
    expect(second.locator(".interrupt-card, .interrupt-error")).to_have_count(0)
    first.context.close()


def _expect_one_finished_answer(page: Page) -> None:
    expect(page.locator(".interrupt-card")).to_have_count(0)
    answer = page.locator(".msg-assistant")
    expect(answer).to_have_count(1)
    expect(answer).to_contain_text("The result is 60.")
    expect(answer).to_have_attribute("data-state", "done")
    expect(answer.locator(".tool-card")).to_have_count(1)
    expect(answer.locator(".tool-result")).to_have_text("60")


def test_approve_from_the_card_continues_in_the_same_bubble(
    page: Page, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _paused_card(page)
    bubble = page.locator(".msg-assistant")
    expect(bubble).to_have_count(1)
    expect(bubble).to_have_attribute("data-state", "waiting")
    expect(bubble.locator(".tool-card")).to_have_attribute("data-state", "pending")
    shots = tmp_path_factory.getbasetemp()
    page.screenshot(path=str(shots / "hitl-approval-card.png"), full_page=True)

    page.click("#approve-all")

    _expect_one_finished_answer(page)
    footer = page.locator(".msg-assistant .usage-footer")
    expect(footer).to_contain_text("tokens")
    # The whole answer's cost: both model calls (before and after the approval), priced in CNY.
    expect(footer).to_contain_text(re.compile(r"\([\d,]+ in · \d+ out\) · ¥0\.\d+"))
    gauge = page.locator(".context-gauge")
    expect(gauge).to_have_attribute("data-percent", re.compile(r"^\d+$"))
    expect(page.locator("#usage-link")).to_have_attribute("href", "/usage")
    page.screenshot(path=str(shots / "hitl-answer-footer.png"), full_page=True)


def test_edit_with_invalid_json_is_refused_in_place(page: Page) -> None:
    _paused_card(page)
    page.click(".edit-call")
    page.fill(".edit-args", '{"expression": "2*21",}')
    expect(page.locator("#approve-all")).to_have_text(re.compile("Run with edits"))
    page.click("#approve-all")
    expect(page.locator(".call-error")).to_contain_text("not valid JSON")

    page.fill(".edit-args", '{"expression": "2*21"}')
    page.click("#approve-all")

    expect(page.locator(".interrupt-card")).to_have_count(0)
    expect(page.locator(".msg-assistant .tool-result")).to_contain_text("42")


def test_reload_brings_the_card_back_and_it_answers_once(
    page: Page, browser: Browser, app: ReflexApp
) -> None:
    _paused_card(page)
    expect(page).to_have_url(SESSION_IN_URL)
    match = SESSION_IN_URL.search(page.url)
    assert match
    other = _open(browser, app.url)  # another browser: nothing of this chat in its state
    other.goto(f"{app.url}/?session={match.group(1)}")

    page.reload()
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")
    expect(other.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")
    page.locator("#approve-all").dblclick()  # the second click must not resume twice

    _expect_one_finished_answer(page)
    expect(page.locator(".interrupt-error")).to_have_count(0)

    # Its card is out of date now: the server refuses, and the tab shows the session as the server
    # has it (answered, no card), with a line saying why (tester: a live card stayed over it).
    other.click("#approve-all")
    expect(other.locator(".resend-refused")).to_contain_text(
        re.compile("already answered|Nothing is waiting")
    )
    expect(other.locator(".interrupt-card")).to_have_count(0)
    _expect_one_finished_answer(other)
    page.reload()
    _expect_one_finished_answer(page)
    other.context.close()


def test_a_paused_answers_reasoning_is_collapsed_live_and_after_a_reload(
    page: Page, llm: ScriptedServer
) -> None:
    """Tester: after a reload the reasoning of an answer waiting on its card came back open
    ("▼ 思考过程"), while finished answers come back collapsed; it is open only while it streams."""
    thought = "The user asks for a sum; the calculator needs approval."
    llm.push(
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "(12+8)*3"}}], "reasoning": thought}
    )
    _send(page, CALCULATION)
    expect(page.locator(".msg-live .interrupt-card")).to_have_attribute("data-kind", "tool_approval")
    reasoning = page.locator(".msg-live .msg-reasoning")
    expect(reasoning).to_contain_text(thought)
    expect(reasoning).not_to_have_attribute("open", "")

    page.reload()
    expect(page.locator(".msg-live .interrupt-card")).to_have_attribute("data-kind", "tool_approval")
    expect(reasoning).to_contain_text(thought)
    expect(reasoning).not_to_have_attribute("open", "")


def test_stop_keeps_the_partial_answer(page: Page, tmp_path_factory: pytest.TempPathFactory) -> None:
    _send(page, "long answer please")
    live = page.locator(".msg-live")
    expect(live).to_contain_text("Ventilation systems move fresh air")
    shots = tmp_path_factory.getbasetemp()
    page.screenshot(path=str(shots / "hitl-streaming-stop.png"))
    page.click("#stop")

    answer = page.locator(".msg-assistant:not(.msg-live)")
    # The stopped run still saves its answer and settles before the bubble turns into a message;
    # a clean clone's full run once took over the default 5 s here.
    expect(answer).to_have_attribute("data-state", "stopped", timeout=30_000)
    expect(answer.locator(".stopped-note")).to_have_text("Stopped")
    expect(answer).to_contain_text("Ventilation systems move fresh air")
    expect(answer).not_to_contain_text("[stopped]")  # the stored marker is for the legacy API only
    expect(page.locator(".chat-error")).to_have_count(0)
    expect(page.locator("#send")).to_be_enabled()
    assert "occupants stay healthy and comfortable." not in answer.inner_text(), "the answer did not finish"
    page.screenshot(path=str(shots / "hitl-stopped.png"))
    live_text = answer.locator(".md-body").inner_text()
    expect(answer.locator(".usage-footer")).to_contain_text("token")  # live too (issue 12)
    live_footer = answer.locator(".usage-footer").inner_text()

    page.reload()  # what a person sees live equals what they see after a reload
    reloaded = page.locator(".msg-assistant").last
    expect(reloaded).to_have_attribute("data-state", "stopped")
    expect(reloaded.locator(".stopped-note")).to_have_count(1)
    expect(reloaded).not_to_contain_text("[stopped]")
    assert reloaded.locator(".md-body").inner_text() == live_text
    expect(reloaded.locator(".usage-footer")).to_have_text(live_footer)


def test_batch_with_a_rejected_call_sends_one_decision_each(
    page: Page, llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    calls = [{"name": "calculate", "arguments": {"expression": e}} for e in ("2+2", "3+3", "4+4")]
    llm.push({"tool_calls": calls}, {"content": "Two sums done, one skipped."})
    _send(page, "three sums")
    card = page.locator(".interrupt-card")
    expect(card.locator(".approval-call")).to_have_count(3)
    expect(page.locator("#approve-all")).to_have_text(re.compile("Approve 3"))
    card.locator(".approval-call").nth(1).locator(".reject-call").click()
    card.locator(".approval-call").nth(1).locator(".reject-reason").fill("Not this one.")
    expect(page.locator("#approve-all")).to_have_text(re.compile("Send: 2 approve · 1 reject"))
    expect(page.locator("#approve-all .submit-icon-send")).to_have_count(1)
    page.screenshot(path=str(tmp_path_factory.getbasetemp() / "hitl-batch-card.png"), full_page=True)

    page.click("#approve-all")

    expect(page.locator(".msg-assistant")).to_contain_text("Two sums done, one skipped.")
    tool_messages = [m for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"]
    contents = sorted(str(m["content"]) for m in tool_messages)
    assert contents[:2] == ["4", "8"] and "Not this one." in contents[2] and len(contents) == 3


def test_a_reject_without_a_reason_reads_as_one_in_the_pages_language(
    page: Page, llm: ScriptedServer
) -> None:
    """Tester: the result line showed langchain's "User rejected the tool call for `calculate` …", and
    the button that sends the rejection had a ✓."""
    _paused_card(page)
    page.click(".reject-call")
    expect(page.locator("#approve-all .submit-icon-ban")).to_have_count(1)
    expect(page.locator("#approve-all .submit-icon-check")).to_have_count(0)
    page.click("#approve-all")

    reason = "The user rejected this action without giving a reason."
    answer = page.locator(".msg-assistant:not(.msg-live)").last
    expect(answer.locator(".tool-card")).to_contain_text("Rejected by you", timeout=60_000)
    # The badge says it was rejected; the line says it did not run, and that no reason came (try18).
    expect(answer.locator(".tool-card .tool-summary")).to_have_text("Not run; you gave no reason.")
    # (the scripted model's own answer echoes what it read, langchain's wrapper included)
    expect(answer.locator(".tool-card")).not_to_contain_text("User rejected the tool call")
    tool_messages = [m for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"]
    assert reason in str(tool_messages[-1]["content"]), "the model reads it too"


def test_questions_card_sends_the_answers(page: Page, llm: ScriptedServer) -> None:
    questions = ["How many people work in the heading?", "What is the cross-section in m²?"]
    llm.push({"tool_calls": [{"name": "ask_user", "arguments": {"questions": questions}}]})
    llm.push({"content": "Thanks, sizing for twelve people."})
    _send(page, "size the airflow for my heading")
    card = page.locator(".interrupt-card")
    expect(card).to_have_attribute("data-kind", "ask_user")
    expect(card.locator(".ask-answer")).to_have_count(2)
    page.click("#submit-answers")
    expect(card.locator(".interrupt-error")).to_contain_text("Answer at least one question.")

    card.locator(".ask-answer").first.fill("Twelve people")
    page.click("#submit-answers")

    expect(page.locator(".msg-assistant")).to_contain_text("Thanks, sizing for twelve people.")
    expect(page.locator(".interrupt-card")).to_have_count(0)
    tool_messages = [m for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"]
    assert "Twelve people" in str(tool_messages[-1]["content"])


def test_plan_card_sends_feedback_then_approves(
    page: Page, llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    plan = "1. Search the air requirements.\n2. Calculate the airflow."
    page.locator("#mode-switch").get_by_role("radio", name="Plan first").click()
    llm.push({"tool_calls": [{"name": "request_plan_approval", "arguments": {"plan": plan}}]})
    _send(page, "plan the airflow check")
    card = page.locator(".interrupt-card")
    expect(card).to_have_attribute("data-kind", "plan")
    expect(card.locator(".plan-text")).to_contain_text("Calculate the airflow.")
    page.screenshot(path=str(tmp_path_factory.getbasetemp() / "hitl-plan-card.png"), full_page=True)
    revised = "1. Search the air requirements.\n2. Calculate the airflow.\n3. Check the velocity."
    llm.push({"tool_calls": [{"name": "request_plan_approval", "arguments": {"plan": revised}}]})

    page.fill("#plan-feedback", "Add a velocity check.")
    page.click("#send-plan-feedback")

    expect(card.locator(".plan-text")).to_contain_text("Check the velocity.")
    tool_messages = [m for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"]
    assert "REJECTED: Add a velocity check." in str(tool_messages[-1]["content"])
    llm.push({"content": "Plan approved; working on it."})
    page.click("#approve-plan")
    expect(page.locator(".msg-assistant")).to_contain_text("Plan approved; working on it.")
    expect(page.locator(".msg-assistant")).to_have_count(1)


def test_dont_ask_again_in_this_conversation_runs_the_next_call_without_a_card(
    browser: Browser, app: ReflexApp, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Try19: remembering an approval was API-only, though /settings lists remembered approvals."""
    page = open_chat(browser, app.url, "hitl-remember", TIMEOUT_MS, locale="zh-CN")
    _send(page, "请计算 (12+8)*3")
    choice = page.locator(".interrupt-card .approval-call .remember-scope")
    expect(choice.locator("option")).to_have_text(["仅这一次", "本对话中不再询问", "以后都不再询问"])
    expect(choice).to_have_value("")  # just this once unless the person says otherwise
    page.locator(".interrupt-card .edit-call").click()
    expect(choice).to_have_count(0)  # only with an approval
    page.locator(".interrupt-card .edit-call").click()
    choice.select_option("session")
    page.screenshot(path=str(tmp_path_factory.getbasetemp() / "hitl-remember-card.png"), full_page=True)
    page.click("#approve-all")
    expect(page.locator(".msg-assistant[data-state='done']")).to_have_count(1)

    _send(page, "请计算 2*21")
    expect(page.locator(".msg-assistant[data-state='done']")).to_have_count(2)
    second = page.locator(".msg-assistant").nth(1)
    expect(second.locator(".tool-result")).to_have_text("42")
    expect(page.locator(".interrupt-card")).to_have_count(0)
    expect(second).not_to_have_attribute("data-state", "waiting")

    page.locator("#settings-link").click()
    row = page.locator("#rules-list .rule-row")
    expect(row).to_have_count(1)
    expect(row.locator(".rule-tool")).to_have_text("计算器")  # its display name, as on the cards
    expect(row).to_contain_text("calculate")
    expect(row).to_contain_text("仅限一个对话")
    page.context.close()
