"""The agent's work in view, in a real browser against the whole app: the todo panel, sub-agent
cards with their own calls inside, approvals after the fact, collapsed results — live and after
a reload alike.

``HITL_TOOLS=calculate`` makes calculations pause for approval; the scripted model is told what
to call through its queue.
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
USER = "work-e2e"
SESSION_IN_URL = re.compile(r"[?&]session=([0-9a-f-]{36})")
TODOS = [
    {"content": "Read the velocity rule", "status": "completed"},
    {"content": "Solve the network", "status": "in_progress"},
    {"content": "Write the report", "status": "pending"},
]


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-agent-work")
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1", "HITL_TOOLS": "calculate"}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


@pytest.fixture
def page(browser: Browser, app: ReflexApp, llm: ScriptedServer) -> Iterator[Page]:
    llm.reset()
    tab = open_chat(browser, app.url, USER, TIMEOUT_MS)
    yield tab
    tab.context.close()


def _send(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#send")


def _finished(page: Page, text: str) -> None:
    answer = page.locator(".msg-assistant").last
    expect(answer).to_contain_text(text)
    expect(answer).to_have_attribute("data-state", "done")
    expect(page).to_have_url(SESSION_IN_URL)


def _todo_panel(page: Page) -> None:
    panel = page.locator(".msg-assistant").last.locator(".todo-list")
    expect(panel.locator(".todo-item")).to_have_count(3)
    expect(panel.locator(".todo-item").nth(0)).to_have_attribute("data-status", "completed")
    expect(panel.locator(".todo-item").nth(1)).to_have_attribute("data-status", "in_progress")
    expect(panel).to_contain_text("Write the report")
    expect(page.locator(".tool-card")).to_have_count(0)  # the list is the panel, not a card


def test_todo_panel_shows_the_plan_live_and_after_a_reload(page: Page, llm: ScriptedServer) -> None:
    llm.push(
        {"tool_calls": [{"name": "write_todos", "arguments": {"todos": TODOS}}]},
        {"content": "The plan is under way."},
    )
    _send(page, "check the mine's airflow step by step")
    _finished(page, "The plan is under way.")
    _todo_panel(page)
    assert any(
        (tool.get("function") or {}).get("name") == "write_todos"
        for tool in llm.requests()[0].get("tools") or []
    ), "write_todos reaches the model"

    page.reload()
    _finished(page, "The plan is under way.")
    _todo_panel(page)


def _subagent_card(page: Page) -> None:
    card = page.locator(".subagent-card")
    expect(card).to_have_count(1)
    expect(card.locator(".tool-label").first).to_have_text("Researcher")
    expect(card.locator(".subagent-description").first).to_have_text("Find the velocity limits")
    expect(card.locator(".tool-label").first).not_to_contain_text("task_1")
    steps = card.locator(".subagent-steps")
    expect(steps.locator("#tool-kb_1")).to_have_count(1)  # its own call sits inside it
    expect(page.locator(".msg-assistant").last.locator(".tool-card")).to_have_count(2)
    expect(steps).not_to_have_attribute("open", re.compile(".*"))  # collapsed once done
    expect(card).to_have_attribute("data-state", "done")


def test_subagent_card_is_named_by_its_task_and_holds_its_calls(page: Page, llm: ScriptedServer) -> None:
    task = {"subagent_type": "researcher", "description": "Find the velocity limits"}
    llm.push(
        {"tool_calls": [{"id": "task_1", "name": "task", "arguments": task}]},
        {"tool_calls": [{"id": "kb_1", "name": "knowledge_search", "arguments": {"query": "velocity"}}]},
    )
    _send(page, "ask a researcher about velocity limits")
    answer = page.locator(".msg-assistant").last
    expect(answer).to_have_attribute("data-state", "done")
    _subagent_card(page)
    # Results are collapsed under one line.
    result_box = page.locator("#tool-kb_1 .tool-result-box")
    expect(result_box).not_to_have_attribute("open", re.compile(".*"))
    expect(result_box.locator(".tool-summary")).to_have_text(re.compile(r"^\d+ passages? found$"))
    expect(page.locator("#tool-kb_1 .tool-result")).not_to_be_visible()

    page.reload()
    expect(page.locator(".msg-assistant").last).to_have_attribute("data-state", "done")
    _subagent_card(page)


def _reviewed_cards(page: Page) -> None:
    cards = page.locator(".msg-assistant").last.locator(".tool-card")
    expect(cards).to_have_count(2)
    for index in range(2):
        expect(cards.nth(index)).to_have_attribute("data-state", "rejected")
        expect(cards.nth(index)).to_contain_text("Rejected by you")
    expect(page.locator(".msg-assistant").last).not_to_contain_text("Failed")


def test_reject_all_reads_rejected_by_you_not_failed(page: Page, llm: ScriptedServer) -> None:
    calls = [{"name": "calculate", "arguments": {"expression": e}} for e in ("2+2", "3+3")]
    llm.push({"tool_calls": calls}, {"content": "Nothing was calculated."})
    _send(page, "two sums")
    expect(page.locator(".interrupt-card .approval-call")).to_have_count(2)

    page.click("#reject-all")

    _finished(page, "Nothing was calculated.")
    _reviewed_cards(page)
    tool_messages = [m for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"]
    assert len(tool_messages) == 2 and not {"4", "6"} & {str(m["content"]) for m in tool_messages}
    page.reload()
    _finished(page, "Nothing was calculated.")
    _reviewed_cards(page)


def _edited_card(page: Page) -> None:
    card = page.locator(".msg-assistant").last.locator(".tool-card")
    expect(card).to_have_attribute("data-review", "edited")
    expect(card).to_contain_text("Edited by you")
    expect(card.locator(".tool-args-old")).to_contain_text('"1+1"')
    expect(card.locator(".tool-args")).to_contain_text('"2*21"')
    expect(card.locator(".tool-args-old")).to_be_visible()  # old → new shown without a click
    expect(card.locator(".tool-result")).to_have_text("42")


def test_edited_call_shows_old_and_new_arguments(page: Page) -> None:
    _send(page, "please calculate 1+1")
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")
    page.click(".edit-call")
    page.fill(".edit-args", '{"expression": "2*21"}')
    page.click("#approve-all")

    _finished(page, "The result is 42.")
    _edited_card(page)
    page.reload()
    _finished(page, "The result is 42.")
    _edited_card(page)


def test_approved_plan_stays_in_the_answer(page: Page, llm: ScriptedServer) -> None:
    plan = "1. Search the air requirements.\n2. Calculate the airflow."
    page.locator("#mode-switch").get_by_role("radio", name="Plan first").click()
    llm.push({"tool_calls": [{"name": "request_plan_approval", "arguments": {"plan": plan}}]})
    _send(page, "plan the airflow check")
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "plan")
    llm.push({"content": "Working on the plan."})
    page.click("#approve-plan")

    _finished(page, "Working on the plan.")
    kept = page.locator(".answered-plan")
    expect(kept).to_have_attribute("data-review", "approved")
    expect(kept).to_contain_text("Approved plan")
    expect(kept).to_contain_text("Calculate the airflow.")
    page.reload()
    expect(page.locator(".answered-plan")).to_contain_text("Calculate the airflow.")


def test_cards_speak_chinese_on_a_chinese_page(browser: Browser, app: ReflexApp, llm: ScriptedServer) -> None:
    llm.reset()
    page = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app.url)
    page.locator("#user-name").fill("工作甲")
    page.click("#user-name-save")
    expect(page.locator("#user-name")).to_have_count(0)
    task = {"subagent_type": "researcher", "description": "查找风速限值"}
    calls = [{"name": "calculate", "arguments": {"expression": e}} for e in ("2+2", "3+3")]
    llm.push(
        {"tool_calls": [{"id": "task_zh", "name": "task", "arguments": task}]},
        {"tool_calls": [{"id": "kb_zh", "name": "knowledge_search", "arguments": {"query": "风速"}}]},
        {"content": "子智能体已完成。"},
        {"tool_calls": calls},
        {"content": "都没有计算。"},
    )
    _send(page, "请子智能体查一下风速限值")
    card = page.locator(".subagent-card")
    expect(card.locator(".tool-label").first).to_have_text("资料检索员")
    expect(card.locator(".subagent-description").first).to_have_text("查找风速限值")
    expect(page.locator("#tool-kb_zh .tool-summary")).to_have_text(re.compile(r"找到 \d+ 段资料"))
    expect(page.locator(".interrupt-card .approval-call")).to_have_count(2)
    page.click("#reject-all")
    expect(page.locator(".msg-assistant").last).to_contain_text("都没有计算。")
    rejected = page.locator('.tool-card[data-state="rejected"]')
    expect(rejected).to_have_count(2)
    expect(rejected.first).to_contain_text("已被你拒绝")
    expect(rejected.first.locator(".tool-summary")).to_have_text("未运行，你没有说明理由。")
    page.context.close()
