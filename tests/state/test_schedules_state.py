"""The schedules form's state headless: a refused save says why once, in the page's language.

Runs the real Reflex event processor (``BaseStateEventProcessor`` + ``StateManagerMemory``)
with a real runtime (SQLite, in-memory checkpointer) and a real schedule service; no model runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from reflex.event import Event
from reflex_base.utils.format import format_event_handler

from tests.headless import HeadlessTab, headless_processor, page_env, served_runtime
from ventapp.billing.guard import QuotaStatus, quota_refusal
from ventapp.config import load_settings
from ventapp.db import schedule_store
from ventapp.scheduler.cron import describe
from ventapp.scheduler.service import ScheduleService, set_service
from ventapp.state.schedules_state import SchedulesState

USER = "Ann"


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[ScheduleService]:
    settings = load_settings(page_env(tmp_path))
    async with served_runtime(settings) as runtime:
        opened = ScheduleService(runtime)
        set_service(opened)
        try:
            yield opened
        finally:
            set_service(None)
            await opened.shutdown()


class Tab(HeadlessTab[SchedulesState]):
    """One browser tab on the schedules page."""

    page_state = SchedulesState

    async def fire(self, name: str, *, chain: bool = False, **payload: Any) -> list[Any]:
        """Process one event; with ``chain``, also the events it starts (the page's following of
        its schedules never ends while the page is open, so only when the test runs it aside)."""
        event = Event(name=format_event_handler(SchedulesState.event_handlers[name]), payload=payload)
        deltas = self.processor.enqueue_stream_delta(self.token, event)
        seen = []
        async for delta in deltas:
            seen.append(delta)
            if not chain:
                break
        await deltas.aclose()
        return seen


@pytest.fixture
async def tab(service: ScheduleService) -> AsyncIterator[Tab]:
    async with headless_processor() as processor:
        opened = Tab(processor)
        # The browser's stored name (a LocalStorage var the page would sync in).
        (await opened.state()).user_name = USER
        await opened.fire("load_page")
        yield opened


async def _errors(tab: Tab) -> tuple[str, str]:
    state = await tab.state()
    return state.cron_error, state.form_error


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("zh-CN", "分钟字段的步长须为大于 0 的整数（如 */5），“*/0”不行。"),
        ("en", "The step in the minute field must be a whole number above 0 (e.g. */5), not “*/0”."),
    ],
)
async def test_a_refused_cron_on_save_is_said_once_in_the_pages_language(
    tab: Tab, service: ScheduleService, lang: str, expected: str
) -> None:
    await tab.fire("relocalise", lang=lang)
    await tab.fire("open_new")
    # Saved before the debounced check ran: the form's own check has not seen this expression.
    await tab.fire("save", form_data={"name": "夜班检查", "prompt": "计算 1+1", "cron": "*/0 * * * *"})

    assert await _errors(tab) == (expected, ""), "the cron callout says it; #form-error must not repeat it"
    state = await tab.state()
    assert state.form_open and state.cron_preview == []
    assert await service.list_for(USER) == []


async def test_editing_to_a_never_firing_cron_is_said_once_in_chinese(
    tab: Tab, service: ScheduleService
) -> None:
    created = await service.create(USER, {"name": "夜班检查", "prompt": "计算 1+1", "cron": "0 8 * * *"})
    await tab.fire("relocalise", lang="zh-CN")
    await tab.fire("open_edit", schedule_id=created.id)
    await tab.fire("type_cron", value="0 0 31 2 *")
    await tab.fire("save", form_data={"name": "夜班检查", "prompt": "计算 1+1", "cron": "0 0 31 2 *"})

    assert await _errors(tab) == ("这个表达式永远不会触发：所选月份（2）里没有 31 日。", "")
    assert (await service.owned(created.id, USER)).cron == "0 8 * * *"


async def test_other_refusals_still_show_under_the_form(tab: Tab) -> None:
    await tab.fire("open_new")
    await tab.fire("save", form_data={"name": "   ", "prompt": "p", "cron": "0 8 * * *"})

    cron_error, form_error = await _errors(tab)
    assert cron_error == "" and form_error != ""


@pytest.mark.parametrize(
    ("lang", "form_data", "expected"),
    [
        ("zh-CN", {"name": "   ", "prompt": "p"}, "请给定时任务起个名称。"),
        ("zh-CN", {"name": "n", "prompt": ""}, "请填写智能体要运行的提示词。"),
        ("zh-CN", {"name": "n" * 201, "prompt": "p"}, "名称最多 200 个字符。"),
        ("en", {"name": "", "prompt": "p"}, "Give the schedule a name."),
    ],
)
async def test_other_refusals_under_the_form_are_in_the_pages_language(
    tab: Tab, service: ScheduleService, lang: str, form_data: dict[str, str], expected: str
) -> None:
    """Tester: an empty name read "name must be non-empty text." in the Chinese UI."""
    await tab.fire("relocalise", lang=lang)
    await tab.fire("open_new")
    await tab.fire("save", form_data={**form_data, "cron": "0 8 * * *"})

    assert await _errors(tab) == ("", expected)
    assert await service.list_for(USER) == []


async def test_a_refused_action_on_the_table_is_in_the_pages_language(
    tab: Tab, service: ScheduleService
) -> None:
    """A row's action on a schedule deleted meanwhile (another tab) says so in Chinese, not the API's English."""
    created = await service.create(USER, {"name": "夜班检查", "prompt": "计算 1+1", "cron": "0 8 * * *"})
    await tab.fire("relocalise", lang="zh-CN")
    await service.delete(created.id, USER)
    await tab.fire("toggle_enabled", schedule_id=created.id, enabled=False)

    assert (await tab.state()).notice == "这个定时任务已不存在，或属于其他用户。"


@pytest.mark.parametrize(
    ("code", "stored", "lang", "expected"),
    [
        (
            "overlap",
            "The previous execution of this schedule was still running …",
            "zh-CN",
            "上一次执行仍在运行，本次未运行。",
        ),
        ("quota", "Daily token quota exceeded.", "zh-CN", "额度已用完"),
        # Tester (2 Dec): a run refused for a limit the user lowered themselves names the usage page.
        ("quota", quota_refusal(QuotaStatus(9, "user", 9, 0, ceiling=90)).message, "zh-CN", "用量页面"),
        ("weird", "Something English.", "zh-CN", "本次执行未成功（错误码 weird）。"),
        # The chat's sentence offers "可以重试" (its Retry button); this page has none, but "Run now".
        ("model_failed", "The model service failed …", "zh-CN", "“立即执行”"),
        ("model_failed", "The model service failed …", "en", "Run now"),
        (None, None, "zh-CN", ""),
    ],
)
def test_a_runs_error_is_worded_by_its_code(
    code: str | None, stored: str | None, lang: str, expected: str
) -> None:
    """The runs table showed the stored English ``error`` (a refused or missed run) in the Chinese UI."""
    from ventapp.state.schedules_state import run_error_text

    text = run_error_text(code, stored, lang)
    assert (expected in text) if expected else text == ""
    assert "重试" not in text and "Retry" not in text, "no Retry on the schedules page"
    assert stored is None or stored not in text


@pytest.mark.parametrize(("lang", "other"), [("en", "zh-CN"), ("zh-CN", "en")])
async def test_the_cron_description_is_in_the_pages_language_only(
    tab: Tab, service: ScheduleService, lang: str, other: str
) -> None:
    """The form showed the expression's description in Chinese and in English at once (the table
    row kept the other language as its tooltip): one language at a time, the page's."""
    cron = "0 8 * * 1-5"
    await service.create(USER, {"name": "Morning gas", "prompt": "hello", "cron": cron})
    (await tab.state()).user_name = USER  # as the fixture: the browser's stored name
    await tab.fire("relocalise", lang=lang)  # re-reads the table
    await tab.fire("open_new")
    await tab.fire("type_cron", value=cron)

    state = await tab.state()
    assert state.cron_description == describe(cron, lang) != describe(cron, other)
    (row,) = state.schedules
    assert row.description == describe(cron, lang)
    shown = [*vars(state).values(), *vars(row).values()]
    assert describe(cron, other) not in shown, "no description in the other language"


async def test_the_list_follows_a_run_that_ends_while_the_page_is_open(
    tab: Tab, service: ScheduleService
) -> None:
    """Tester: after "Run now" on a run failing in 0.5 s, the row said 运行中 15 s later (the API:
    failed) until ↻ was clicked. The page re-reads its list while a run shown is running; a
    passed next-run time is re-read too (the row showed a past 下次运行)."""
    created = await service.create(USER, {"name": "夜班检查", "prompt": "计算 1+1", "cron": "0 8 * * *"})
    engine = service.runtime.engine
    claim = schedule_store.claim_tick(
        engine, created.id, USER, "manual", datetime.now(UTC).replace(tzinfo=None)
    )
    (await tab.state()).user_name = USER  # as the fixture: the browser's stored name
    # The page's on_mount; its chain goes on while the page is open (the tab never leaves it here).
    opened = asyncio.create_task(tab.fire("load_page", chain=True))
    try:
        await asyncio.sleep(0.3)
        await tab.fire("show_runs", schedule_id=created.id)
        (row,) = (await tab.state()).schedules
        assert row.last_status == "running"
        schedule_store.close_claim(engine, claim.row_id or "", "failed", "internal", "It failed.")
        for _ in range(50):  # the page re-reads every RUNNING_EVERY_S while a run shown is running
            await asyncio.sleep(0.1)
            state = await tab.state()
            if state.schedules[0].last_status == "failed":
                break
        assert state.schedules[0].last_label == "失败", "the row follows the run's end without ↻"
        assert [run.label for run in state.runs] == ["失败"], "and so does the runs table"
    finally:
        await tab.fire("leave_page")
        opened.cancel()


async def test_a_run_now_refusal_is_shown_as_an_error(tab: Tab, service: ScheduleService) -> None:
    """Tester: a Run-now quota refusal showed in the teal info box; refusals read as errors everywhere."""
    gone = await service.create(USER, {"name": "夜班检查", "prompt": "计算 1+1", "cron": "0 8 * * *"})
    await tab.fire("relocalise", lang="zh-CN")
    await service.delete(gone.id, USER)
    await tab.fire("run_now", schedule_id=gone.id)
    state = await tab.state()
    assert (state.notice, state.notice_refused) == ("这个定时任务已不存在，或属于其他用户。", True)


async def test_the_trash_button_asks_first_and_only_confirming_deletes(
    tab: Tab, service: ScheduleService
) -> None:
    """Tester (try19): the row's trash button deleted at once, no question and no undo."""
    created = await service.create(USER, {"name": "夜班检查", "prompt": "计算 1+1", "cron": "0 8 * * *"})
    (await tab.state()).user_name = USER  # as the fixture: the browser's stored name
    await tab.fire("relocalise", lang="zh-CN")  # re-reads the table
    await tab.fire("ask_delete", schedule_id=created.id)
    state = await tab.state()
    assert (state.delete_id, state.delete_name) == (created.id, "夜班检查")
    assert [s.id for s in await service.list_for(USER)] == [created.id], "asking deletes nothing"

    await tab.fire("cancel_delete")
    await tab.fire("ask_delete", schedule_id=created.id)
    await tab.fire("on_delete_open_change", is_open=False)  # Escape
    assert (await tab.state()).delete_id == ""
    assert [s.id for s in await service.list_for(USER)] == [created.id], "Cancel and Escape keep it"

    await tab.fire("ask_delete", schedule_id=created.id)
    await tab.fire("confirm_delete")
    state = await tab.state()
    assert state.delete_id == "" and state.schedules == []
    assert await service.list_for(USER) == []
