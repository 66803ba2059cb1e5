"""The usage page's state, headless (real Reflex event processor), reading a real billing database.

Lives under tests/billing because the page is part of the billing issue; it drives
``UsageState`` the way the browser does and checks what the page would show.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa
from reflex.istate.manager.memory import StateManagerMemory
from reflex_base.event.processor import BaseStateEventProcessor

from tests.billing.conftest import make_settings
from tests.headless import HeadlessTab
from tests.support import patched_env
from ventapp.billing import reports
from ventapp.billing.settlement import settle
from ventapp.billing.usage import CallUsage
from ventapp.db import billing_store
from ventapp.db.models import utcnow
from ventapp.i18n import formats
from ventapp.pages.usage import usage_page
from ventapp.state import ui_identity
from ventapp.state import usage_state as us


class Tab(HeadlessTab[us.UsageState]):
    """One browser tab on /usage."""

    page_state = us.UsageState


@pytest.fixture
async def tab(engine: sa.Engine, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Tab]:
    runtime = SimpleNamespace(engine=engine, settings=make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="10000"))
    monkeypatch.setattr(us, "get_runtime", lambda: runtime)
    processor = BaseStateEventProcessor().configure(state_manager=StateManagerMemory())
    async with processor:
        yield Tab(processor)


async def _as_user(tab: Tab, name: str) -> None:
    """Give the tab a user name, as the browser's localStorage does when it hydrates."""
    await tab.fire("edit_quota_input", value="")  # the first event creates the tab's state
    (await tab.state()).user_name = name


def _book(engine: sa.Engine, run_id: str, calls: list[CallUsage], **kw: Any) -> None:
    settle(engine, run_id=run_id, session_id="s", user_name="alice", model="scripted-demo", calls=calls, **kw)


async def test_page_shows_today_split_quota_chart_and_ledger(tab: Tab, engine: sa.Engine) -> None:
    _book(
        engine,
        "run-1",
        [CallUsage("a", 2_000, 500, "provider"), CallUsage("b", 0, 500, "estimate", main_thread=False)],
    )
    _book(engine, "run-0", [CallUsage("c", 1_000, 0, "provider")], at=utcnow() - timedelta(days=3))
    await _as_user(tab, "alice")

    await tab.fire("load_page")

    state = await tab.state()
    assert state.loaded and state.problem == ""
    assert (state.total_tokens, state.input_tokens, state.output_tokens) == ("3,000", "2,000", "1,000")
    assert (state.real_tokens, state.estimate_tokens, state.has_estimates) == ("2,500", "500", True)
    assert state.cost_text.startswith("¥")
    assert (state.limited, state.limit_text, state.remaining_text, state.percent_used) == (
        True,
        "10,000",
        "7,000",
        30,
    )
    assert len(state.series) == us.CHART_DAYS
    assert state.series[-1]["input"] == 2_000 and state.series[-4]["input"] == 1_000
    assert [row.run_id for row in state.rows][:2] == ["run-1", "run-1"]
    # One precision rule for every cost shown (a tester saw ¥0.00071 beside ¥0.000676): ¥0.000100, not ¥0.0001.
    entries = reports.recent_usage(engine, "alice", limit=50)["items"]
    assert [row.cost for row in state.rows] == [
        formats.money(entry["cost_micros"], entry["currency"], "zh-CN") for entry in entries
    ]
    assert {row.source for row in state.rows} == {"real", "estimate"}
    assert any(row.sub_agent for row in state.rows) and state.total_rows == 3


async def test_without_a_name_nothing_is_read(tab: Tab, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(us, "read_snapshot", lambda *a: pytest.fail("read without a user"))
    await tab.fire("load_page")
    state = await tab.state()
    assert state.loaded and state.rows == []


async def test_quota_form_validates_then_saves(tab: Tab, engine: sa.Engine) -> None:
    _book(engine, "run-1", [CallUsage("a", 900, 100, "provider")])
    await _as_user(tab, "alice")
    await tab.fire("load_page")

    await tab.fire("save_quota", form_data={"daily_token_limit": "-5"})
    assert (await tab.state()).quota_error == "请输入 0（不限）到 2,147,483,647 之间的整数。"

    await tab.fire("save_quota", form_data={"daily_token_limit": "4,000"})
    state = await tab.state()
    assert state.quota_error == "" and state.quota_notice == "每日额度已设为 4,000 token。"
    assert (state.limit_text, state.percent_used, state.quota_source) == ("4,000", 25, "user")

    await tab.fire("relocalise", lang="en")
    await tab.fire("save_quota", form_data={"daily_token_limit": "0"})
    state = await tab.state()
    assert state.quota_error.startswith(
        "The highest daily quota you may set yourself is 10,000 (the limit an operator set); ask an operator for more."
    )
    assert "AUTH_NONE_OPERATORS" in state.quota_error, "in AUTH_MODE=none, how one becomes an operator"
    assert state.limited is True and state.limit_text == "4,000", "a user lowers only (issue 15)"


async def test_a_limit_at_or_below_todays_usage_asks_first_and_can_be_raised_back(
    tab: Tab, engine: sa.Engine
) -> None:
    """Tester, 2 Dec: 100,000 under 102,082 used locked the user out until midnight, no undo."""
    _book(engine, "run-1", [CallUsage("a", 900, 100, "provider")])
    await _as_user(tab, "alice")
    await tab.fire("load_page")

    await tab.fire("save_quota", form_data={"daily_token_limit": "1,000"})
    state = await tab.state()
    assert state.limit_text == "10,000" and state.quota_notice == "", "nothing saved before the answer"
    assert state.quota_warning == (
        "今天已用 1,000 token，不少于 1,000：设为 1,000 后，北京时间零点之前你将无法继续对话"
        "（之后仍可把额度调回）。确定要设置吗？"
    )
    await tab.fire("cancel_quota")
    state = await tab.state()
    assert (state.quota_warning, state.limit_text) == ("", "10,000")

    await tab.fire("save_quota", form_data={"daily_token_limit": "500"})
    await tab.fire("confirm_quota")
    state = await tab.state()
    assert (state.quota_warning, state.limit_text, state.quota_notice) == (
        "",
        "500",
        "每日额度已设为 500 token。",
    )

    await tab.fire("save_quota", form_data={"daily_token_limit": "10000"})
    state = await tab.state()
    assert state.quota_error == "" and state.limit_text == "10,000", "the user's own lowering is undone"
    await tab.fire("save_quota", form_data={"daily_token_limit": "10001"})
    state = await tab.state()
    assert state.quota_error.startswith("你自己的每日额度最多可设为 10,000 token（运维人员设定的上限）")
    assert state.limit_text == "10,000"


async def test_the_ceiling_a_user_may_set_shows_beside_the_form_before_they_go_over_it(
    tab: Tab, engine: sa.Engine
) -> None:
    """Tester, 2 Dec: the page named the ceiling only in the refusal of a limit above it."""
    await _as_user(tab, "alice")
    await tab.fire("load_page")
    assert (await tab.state()).ceiling_text == "你可以自己设置的上限：10,000 token（运维人员设定）"
    await tab.fire("relocalise", lang="en")
    assert (
        await tab.state()
    ).ceiling_text == "The most you may set yourself: 10,000 tokens (set by an operator)"
    assert 'id:"quota-ceiling"' in str(usage_page())

    billing_store.set_quota(engine, "alice", 50, operator_limit=0)  # an operator: no ceiling
    await tab.fire("relocalise", lang="zh-CN")
    # try14: "（运维人员设定）" read as if an operator had set something when nobody had.
    assert (await tab.state()).ceiling_text == "你可以自己设置的上限：不限"


async def test_an_operators_ceiling_reads_unlimited(
    tab: Tab, engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tester: an operator's page named TFAGENTS_DAILY_TOKEN_LIMIT as the most they may set, yet
    an operator may set any limit."""
    runtime = us.get_runtime()
    monkeypatch.setattr(ui_identity, "get_runtime", lambda: runtime)
    with patched_env({"AUTH_MODE": "none", "AUTH_NONE_OPERATORS": "ops"}):
        await _as_user(tab, "ops")
        await tab.fire("load_page")
        assert (await tab.state()).ceiling_text == "你可以自己设置的上限：不限"


async def test_ledger_pages_through_older_rows(tab: Tab, engine: sa.Engine) -> None:
    for index in range(us.PAGE_SIZE + 5):
        _book(
            engine,
            f"run-{index:02d}",
            [CallUsage("k", 1, 1, "provider")],
            at=utcnow() - timedelta(seconds=100 - index),
        )
    await _as_user(tab, "alice")
    await tab.fire("load_page")
    state = await tab.state()
    assert state.rows[0].run_id == f"run-{us.PAGE_SIZE + 4:02d}" and state.has_next and not state.has_prev
    assert state.page_label == f"第 1–{us.PAGE_SIZE} 条，共 {us.PAGE_SIZE + 5} 条"

    await tab.fire("next_page")
    state = await tab.state()
    assert (
        len(state.rows) == 5 and state.rows[-1].run_id == "run-00" and state.has_prev and not state.has_next
    )

    await tab.fire("prev_page")
    assert (await tab.state()).offset == 0


async def test_database_failure_shows_a_sentence_not_the_exception(
    tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any) -> None:
        raise sa.exc.OperationalError("SELECT", {}, Exception("secret internals"))

    monkeypatch.setattr(us, "read_snapshot", broken)
    await _as_user(tab, "alice")
    await tab.fire("load_page")
    state = await tab.state()
    assert state.problem == "无法从数据库读取用量，错误已记录到日志。" and "secret" not in state.problem


def test_usage_page_builds() -> None:
    rendered = str(usage_page().render())
    for element_id in ("usage-today", "usage-chart", "ledger-table", "quota-form", "usage-sources"):
        assert element_id in rendered
