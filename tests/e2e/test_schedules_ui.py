"""Schedules in the Reflex UI, in a real browser: create with live cron validation, run now, open
the run's session; a run that needs an approval is handed off (badge, sidebar mark) and finished
from the chat. One app for the module; the steps build on each other, so they run as one story."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.browser import chromium, open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
USER = "schedules-e2e"


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-schedules")
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1", "HITL_TOOLS": "calculate"}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


@pytest.fixture(scope="module")
def page(app: ReflexApp) -> Iterator[Page]:
    with chromium() as browser:
        yield open_chat(browser, app.url, USER, TIMEOUT_MS)


def _create(page: Page, name: str, prompt: str, cron: str) -> None:
    page.click("#new-schedule")
    page.fill("#schedule-name", name)
    page.fill("#schedule-prompt", prompt)
    page.fill("#schedule-cron", cron)
    expect(page.locator("#cron-error")).to_have_count(0)
    page.click("#schedule-save")
    expect(page.locator("#schedule-form")).to_have_count(0)


def _row(page: Page, name: str):  # type: ignore[no-untyped-def]  # a Playwright Locator
    return page.locator(".schedule-row", has=page.locator(".schedule-name", has_text=re.compile(f"^{name}$")))


def _run_until(page: Page, status: str) -> None:
    """Refresh the runs table until its newest row reads ``status`` (the run is in the background)."""
    newest = page.locator(".schedule-run-row").first
    deadline = time.monotonic() + 60  # a scheduled run queues behind other work on a busy machine
    while newest.get_attribute("data-status") != status:
        assert time.monotonic() < deadline, f"the run never became {status}"
        page.click("#schedule-runs-refresh")
        page.wait_for_timeout(200)  # let the refreshed table arrive before reading it again


def test_schedules_story(page: Page, llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    llm.reset()
    page.click("#schedules-link")
    expect(page).to_have_url(re.compile(r"/schedules$"))
    expect(page.locator("#schedules-empty")).to_be_visible()

    # The form validates the expression as it is typed and previews the next five runs.
    page.click("#new-schedule")
    page.fill("#schedule-cron", "61 8 * * *")
    expect(page.locator("#cron-error")).to_have_text(
        "The minute must be between 0 and 59; 61 is out of range."
    )
    # One sentence per cause: a zero step is not the range rule, a never-firing one not the field count.
    page.fill("#schedule-cron", "*/0 * * * *")
    expect(page.locator("#cron-error")).to_have_text(
        "The step in the minute field must be a whole number above 0 (e.g. */5), not “*/0”."
    )
    page.fill("#schedule-cron", "0 0 31 2 *")
    expect(page.locator("#cron-error")).to_have_text(
        "This expression never fires: none of the chosen months (2) has day 31."
    )
    page.fill("#schedule-cron", "0 8 * * 1-5")
    expect(page.locator("#cron-error")).to_have_count(0)
    expect(page.locator("#cron-description")).to_have_text("At 08:00, Monday through Friday")
    expect(page.locator(".cron-preview-item")).to_have_count(5)
    for text in page.locator(".cron-preview-item").all_inner_texts():
        assert text.endswith("08:00"), text
    page.keyboard.press("Escape")

    _create(page, "Morning gas", "hello from the timetable", "0 8 * * 1-5")
    row = _row(page, "Morning gas")
    expect(row.locator(".schedule-cron")).to_have_text("0 8 * * 1-5")
    expect(row.locator(".schedule-next")).to_contain_text("08:00")
    shots = tmp_path_factory.getbasetemp()
    page.screenshot(path=str(shots / "schedules-list.png"), full_page=True)

    # Run now, then open the run's own session from the runs table.
    row.locator(".schedule-run-now").click()
    expect(page.locator("#schedule-runs-title")).to_contain_text("Morning gas")
    expect(page.locator(".schedule-run-row")).to_have_count(1)
    # Neither ↻ nor a reload: the page follows its runs while open (tester: the row said 运行中
    # long after the run had ended, until ↻).
    follow = {"timeout": 60_000}  # a scheduled run queues behind other work on a busy machine
    expect(page.locator(".schedule-run-row").first).to_have_attribute("data-status", "success", **follow)
    expect(row.locator(".schedule-last [data-status]")).to_have_attribute("data-status", "success", **follow)
    page.locator(".schedule-run-open").first.click()
    expect(page).to_have_url(re.compile(r"/\?session=[0-9a-f-]{36}"))
    expect(page.locator(".msg-user")).to_contain_text("hello from the timetable")
    expect(page.locator(".msg-assistant")).to_contain_text("You said: hello from the timetable")
    # The schedule's name, the date once on the line under it (tester #13, 2 Dec).
    expect(page.locator(".session-item[data-active='true'] .session-title")).to_have_text("Morning gas")

    # A run that needs an approval waits for a person, who finds it and finishes it in the chat.
    page.click("#schedules-link")
    _create(page, "Fan check", "please calculate (2+3)*4", "30 7 * * *")
    _row(page, "Fan check").locator(".schedule-run-now").click()
    expect(page.locator("#schedule-runs-title")).to_contain_text("Fan check")
    _run_until(page, "waiting_input")
    page.click("#schedules-refresh")
    expect(page.locator("#schedules-waiting")).to_be_visible()
    page.screenshot(path=str(shots / "schedules-waiting.png"), full_page=True)
    page.locator(".schedule-run-open").first.click()
    expect(page.locator("#waiting-badge")).to_have_text("1")
    expect(page.locator(".session-item[data-active='true'] .waiting-mark")).to_have_count(1)
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "tool_approval")
    page.click("#approve-all")
    expect(page.locator(".msg-assistant")).to_contain_text("The result is 20.")
    expect(page.locator("#waiting-badge")).to_have_count(0)
    expect(page.locator(".waiting-mark")).to_have_count(0)

    page.click("#schedules-link")
    _row(page, "Fan check").locator(".schedule-show-runs").click()
    expect(page.locator(".schedule-run-row").first).to_have_attribute("data-status", "success")
    expect(_row(page, "Fan check").locator(".schedule-last [data-status]")).to_have_attribute(
        "data-status", "success"
    )


def test_the_schedules_table_fits_its_card_at_1400_px(app: ReflexApp, page: Page) -> None:
    """Tester (Chinese UI, 1,400 px wide window): the row's delete icon was cut off at the card's edge."""
    browser = page.context.browser  # the module's (one Playwright per thread)
    assert browser is not None
    wide = open_chat(browser, app.url, "layout-e2e", TIMEOUT_MS, locale="zh-CN", width=1400)
    try:
        wide.click("#schedules-link")
        expect(wide.locator("#schedules-empty")).to_be_visible()
        # A name without spaces (a file-like name) and a long expression: no break opportunity.
        name = "Daily_ventilation_and_gas_report_for_working_faces_A1_B2"
        _create(wide, name, "汇总今天各采区的风量与瓦斯数据", "0,15,30,45 8-18 1-7,15-21 1,4,7,10 1-5")
        delete = _row(wide, name).locator(".schedule-delete")
        expect(delete).to_be_visible()
        card = wide.locator("#schedules-list").bounding_box()
        icon = delete.locator("svg").bounding_box()
        button = delete.bounding_box()
        assert card and icon and button
        assert card["x"] <= button["x"] and button["x"] + button["width"] <= card["x"] + card["width"], (
            card,
            button,
        )
        scroller = wide.locator("#schedules-table-scroll")
        assert scroller.evaluate("el => el.scrollWidth <= el.clientWidth"), "the table scrolls sideways"
        visible = scroller.bounding_box()
        assert visible and icon["x"] + icon["width"] <= visible["x"] + visible["width"], (visible, icon)
    finally:
        wide.context.close()


def test_deleting_a_schedule_asks_first_and_its_fields_are_labelled(app: ReflexApp, page: Page) -> None:
    """Tester (try19, Chinese UI): the trash button deleted the schedule at once, no question and no
    undo; and the form's fields had captions but no labels (screen readers read the placeholder)."""
    browser = page.context.browser  # the module's (one Playwright per thread)
    assert browser is not None
    zh = open_chat(browser, app.url, "delete-e2e", TIMEOUT_MS, locale="zh-CN")
    try:
        zh.click("#schedules-link")
        expect(zh.locator("#schedules-empty")).to_be_visible()
        zh.click("#new-schedule")
        # Each field found by its label, as a screen reader names it.
        fields = {"名称": "schedule-name", "提示词": "schedule-prompt", "cron 表达式": "schedule-cron"}
        fields["模式"] = "schedule-mode"
        for label, field_id in fields.items():
            expect(zh.get_by_label(label)).to_have_id(field_id)
        expect(zh.get_by_label("启用")).to_have_class(re.compile("schedule-form-enabled"))
        zh.get_by_label("名称").fill("夜班检查")
        zh.get_by_label("提示词").fill("汇总今天的瓦斯读数")
        zh.get_by_label("cron 表达式").fill("0 8 * * *")
        expect(zh.locator("#cron-error")).to_have_count(0)
        zh.click("#schedule-save")
        expect(zh.locator("#schedule-form")).to_have_count(0)
        row = _row(zh, "夜班检查")
        expect(row).to_have_count(1)

        dialog = zh.get_by_role("alertdialog")
        # Cancel keeps it; so does Escape. The dialog opens on Cancel: Enter does not delete.
        for close in ("cancel", "escape"):
            row.locator(".schedule-delete").click()
            expect(dialog).to_contain_text("删除定时任务“夜班检查”？")
            expect(dialog).to_contain_text("对话仍保留在对话列表中")
            expect(zh.locator("#schedule-delete-cancel")).to_be_focused()
            if close == "cancel":
                zh.click("#schedule-delete-cancel")
            else:
                zh.keyboard.press("Escape")
            expect(dialog).to_have_count(0)
            zh.click("#schedules-refresh")
            expect(row).to_have_count(1)

        row.locator(".schedule-delete").click()
        expect(zh.locator("#schedule-delete-confirm")).to_have_text("删除")
        zh.click("#schedule-delete-confirm")
        expect(dialog).to_have_count(0)
        expect(row).to_have_count(0)
        expect(zh.locator("#schedules-empty")).to_be_visible()
    finally:
        zh.context.close()

    english = open_chat(browser, app.url, "labels-e2e", TIMEOUT_MS)
    try:
        english.click("#schedules-link")
        english.click("#new-schedule")
        expect(english.get_by_label("Name", exact=True)).to_have_id("schedule-name")
        expect(english.get_by_label("Cron expression")).to_have_id("schedule-cron")
    finally:
        english.context.close()
