"""Tool cards as the chat shows them (``ventapp.state.views``): sub-agents, summaries, reviews, todos."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from zoneinfo import ZoneInfo

from ventapp.agent import events as ev
from ventapp.agent.errors import CANCELLED, CANCELLED_EARLY, SERVER_STOPPING, SERVER_STOPPING_EARLY
from ventapp.agent.interrupts import ResumeAnswer
from ventapp.i18n import MESSAGES
from ventapp.scheduler.execution import session_title
from ventapp.state.interrupt_view import interrupt_view, reject_all, reviewed
from ventapp.state.live_answer import LiveAnswer, reduce_event, to_message
from ventapp.state.views import (
    message_from_row,
    nested,
    session_from_row,
    tool_card_from_dict,
    tool_summary,
    worded_error,
)

TASK_ARGS = {"subagent_type": "researcher", "description": "Find the airflow rule"}


def _fold(events: list[ev.ContractEvent], lang: str = "en") -> LiveAnswer:
    live = LiveAnswer(lang=lang)
    for event in events:
        live = reduce_event(live, event)
    return live


def _call(call_id: str, tool: str, args: dict, agent_id: str = "main") -> ev.ToolCall:
    return ev.ToolCall(tool=tool, cn_tool=tool, args=args, agent_id=agent_id, tool_call_id=call_id)


def test_subagent_card_is_named_by_type_and_task_and_holds_its_calls() -> None:
    live = _fold(
        [
            _call("call_task", "task", TASK_ARGS),
            _call("call_inner", "calculate", {"expression": "1+1"}, agent_id="call_task"),
            _call("call_main", "calculate", {"expression": "2+2"}),
        ]
    )
    task, inner, main = live.tools
    assert (task.cn_tool, task.description) == ("Researcher", "Find the airflow rule")
    assert "call_" not in task.cn_tool + task.description
    assert (inner.parent, main.parent, task.parent) == ("call_task", "", "")
    zh = _fold([_call("call_task", "task", TASK_ARGS)], lang="zh-CN").tools[0]
    assert zh.cn_tool == "资料检索员"


def test_a_call_of_an_unknown_agent_stays_at_the_top() -> None:
    (card,) = nested(
        [tool_card_from_dict({"tool_call_id": "c", "tool": "calculate", "agent_id": "call_gone"})]
    )
    assert card.parent == ""


def test_tool_result_gets_a_one_line_summary() -> None:
    assert tool_summary("60") == "60"
    assert tool_summary('{"result": 42, "data": {"x": 1}}') == "42"
    assert (
        tool_summary('{"sources": [{"title": "a"}, {"title": "b"}], "data": []}', "en") == "2 sources found"
    )
    assert tool_summary('{"sources": []}', "zh-CN") == "找到 0 个来源"
    long = tool_summary("word " * 100)
    assert len(long) <= 96 and long.endswith("…") and "\n" not in tool_summary("first\nsecond")
    live = _fold(
        [
            _call("c1", "calculate", {}),
            ev.ToolResult(tool="calculate", cn_tool="", content="60", tool_call_id="c1"),
        ]
    )
    assert live.tools[0].summary == "60"


def test_reviews_mark_cards_live_as_the_stored_ones_after_a_reload() -> None:
    event = ev.Interrupt(
        kind="tool_approval",
        interrupt_token="tok",
        tool_approval={
            "requests": [
                {"tool": "calculate", "args": {"expression": "1+1"}},
                {"tool": "calculate", "args": {"expression": "2+2"}},
            ]
        },
        tool_call_ids=["c1", "c2"],
    )
    view = interrupt_view(event, "en")
    live = _fold(
        [_call("c1", "calculate", {"expression": "1+1"}), _call("c2", "calculate", {"expression": "2+2"})]
    )
    answer = ResumeAnswer(
        decisions=[{"type": "edit", "args": {"expression": "3*3"}}, {"type": "reject", "message": ""}]
    )
    edited, rejected = reviewed(list(live.tools), view, answer)
    assert edited.review == "edited" and '"1+1"' in edited.old_args_json
    assert rejected.review == "rejected" and rejected.old_args_json == ""
    # The edit's new call event keeps the mark.
    after = reduce_event(
        LiveAnswer(lang="en", tools=(edited, rejected)), _call("c1", "calculate", {"expression": "3*3"})
    )
    assert after.tools[0].review == "edited" and '"3*3"' in after.tools[0].args_json

    stored = tool_card_from_dict(
        {
            "tool_call_id": "c1",
            "tool": "calculate",
            "args": {"expression": "3*3"},
            "content": "9",
            "review": "edited",
            "original_args": {"expression": "1+1"},
        }
    )
    assert (stored.review, stored.old_args_json, stored.args_json) == (
        edited.review,
        edited.old_args_json,
        after.tools[0].args_json,
    )
    assert [c.mode for c in reject_all(view).calls] == ["reject", "reject"]


def test_answered_plan_stays_with_its_verdict() -> None:
    plan = {"plan": "1. Measure\n2. Solve"}
    live = _fold(
        [
            _call("p1", "request_plan_approval", plan),
            ev.ToolResult(
                tool="request_plan_approval",
                cn_tool="",
                content="APPROVED. Carry out the plan now.",
                tool_call_id="p1",
            ),
        ]
    )
    assert (live.tools[0].plan, live.tools[0].review) == ("1. Measure\n2. Solve", "approved")
    stored = tool_card_from_dict(
        {"tool_call_id": "p1", "tool": "request_plan_approval", "args": plan, "content": "REJECTED: no"}
    )
    assert stored.review == "sent_back"


def _answer_row(tool_calls: list[dict[str, object]]) -> SimpleNamespace:
    """A stored assistant message with ``tool_calls``, as ``message_from_row`` reads it."""
    return SimpleNamespace(
        id=1,
        role="assistant",
        content="ok",
        status="complete",
        citations=[],
        usage=None,
        tool_calls=tool_calls,
    )


def test_reloaded_answer_shows_the_last_todo_list() -> None:
    todos = [
        {"content": "Read the rule", "status": "completed"},
        {"content": "Solve", "status": "in_progress"},
    ]
    row = _answer_row(
        tool_calls=[
            {"tool_call_id": "t1", "tool": "write_todos", "args": {"todos": todos[:1]}, "content": "ok"},
            {"tool_call_id": "t2", "tool": "write_todos", "args": {"todos": todos}, "content": "ok"},
            {
                "tool_call_id": "t3",
                "tool": "write_todos",
                "args": {"todos": []},
                "content": "ok",
                "agent_id": "call_sub",
            },
        ],
    )
    message = message_from_row(row, "en")
    assert [(t.content, t.status) for t in message.todos] == [
        ("Read the rule", "completed"),
        ("Solve", "in_progress"),
    ]


def test_a_paused_answer_closed_by_a_new_message_reads_dropped_after_a_reload() -> None:
    card = {"tool_call_id": "c1", "tool": "calculate", "cn_tool": "计算器", "args": {"expression": "1+1"}}
    row = SimpleNamespace(
        id=7,
        role="assistant",
        content="Let me check.",
        status="cancelled",
        tool_calls=[card],
        citations=[],
        usage={},
    )
    superseded = SimpleNamespace(error_code="superseded", error="A new message was sent …", duration_ms=None)

    view = message_from_row(row, "zh-CN", superseded)

    assert (view.status, view.error, view.notice) == (
        "dropped",
        "",
        "你发送了新消息：这里待确认的调用已作废。",
    )
    assert [c.review for c in view.tools] == ["dropped"], "never the red Failed, never Waiting for you"
    stopped = message_from_row(row, "en", SimpleNamespace(error_code="cancelled", error="", duration_ms=5))
    assert stopped.status == "stopped" and stopped.tools[0].review == "", "a Stop stays a Stop"


def test_retry_is_offered_only_for_errors_sending_again_can_help() -> None:
    row = SimpleNamespace(
        id=8, role="assistant", content="", status="failed", tool_calls=[], citations=[], usage={}
    )

    def stored(code: str) -> bool:
        return message_from_row(
            row, "en", SimpleNamespace(error_code=code, error="x", duration_ms=3)
        ).retryable

    def live(code: str) -> bool:
        return to_message(LiveAnswer(error="x", error_code=code, lang="en")).retryable

    codes = ("model_busy", "model_unreachable", "model_failed", "model_error", "model_rejected", "quota")
    expected = [True, True, True, False, False, False]  # a 5xx failure may pass; a settings problem won't
    assert [stored(code) for code in codes] == expected
    assert [live(code) for code in codes] == expected


def test_a_model_server_failure_reads_as_the_servers_and_offers_retry() -> None:
    """Tester: HTTP 500 from the model read "模型服务在当前设置下拒绝工作。" with no Retry."""
    message = "The model server failed (HTTP 500): Scripted server error (you asked for one). Send the message again"
    failure = LiveAnswer(error=message, error_code="model_failed", lang="zh-CN")
    shown = to_message(failure)
    assert shown.retryable
    plain, detail = worded_error("model_failed", message, "zh-CN")
    assert plain.startswith("模型服务自身出错了") and "重试" in plain and "设置" not in plain
    assert "HTTP 500" in detail, "the operator's detail stays beside it"
    assert worded_error("model_failed", message, "en")[0].startswith("The model service failed on its side")
    assert worded_error("model_error", "The model endpoint rejected the API key.", "zh-CN")[0] == (
        "模型服务在当前设置下拒绝工作。"
    ), "a settings problem reads as before"
    assert not to_message(LiveAnswer(text="fine", lang="en")).retryable


def test_the_operators_detail_of_a_fixed_failure_is_in_the_pages_language() -> None:
    """Tester: with no model configured the error line was Chinese, its operator detail English."""
    from ventapp.agent.errors import UNCONFIGURED
    from ventapp.state.views import worded_error

    plain, detail = worded_error(UNCONFIGURED.code, UNCONFIGURED.message, "zh-CN")
    assert plain == "尚未配置模型，暂时无法回答。"
    assert detail.startswith("尚未配置模型。请在 .env 中设置 OPENAI_BASE_URL、OPENAI_API_KEY 和 MODEL_NAME")
    assert worded_error(UNCONFIGURED.code, UNCONFIGURED.message, "en")[1] == UNCONFIGURED.message
    own = "upstream said: 401 bad key"
    assert worded_error("model_unreachable", own, "zh-CN")[1] == own, "a sentence of its own stays as written"


def test_the_ui_words_every_fixed_failure_the_api_words() -> None:
    """One lookup for both: the UI left a disconnect's and a shutdown's detail (code ``cancelled``) in English."""
    from ventapp.agent.errors import CLIENT_GONE, FIXED_FAILURES, SHUTDOWN
    from ventapp.i18n import t

    for failure, key in FIXED_FAILURES.items():
        detail = worded_error(failure.code, failure.message, "zh-CN")[1]
        assert detail in ("", t(key, "zh-CN")), failure  # "" when the plain sentence says it all
    for failure in (CLIENT_GONE, SHUTDOWN):
        assert worded_error(failure.code, failure.message, "zh-CN")[1] == t(FIXED_FAILURES[failure], "zh-CN")


def test_a_scheduled_runs_session_shows_the_schedules_name_and_the_date_once() -> None:
    """Tester: the title read ``2026-12-02 13:36`` (stored so, and so in the API) beside sidebar dates
    reading ``2026/12/2``. Tester #13 (2 Dec): "每分钟风量计算 · 2026/12…" was cut off, the same date
    printed again underneath: the title is the schedule's name, the line under it the date."""
    schedule = SimpleNamespace(name="早班检查")
    fired = datetime(2026, 12, 2, 5, 36, tzinfo=UTC)  # 13:36 in Shanghai
    stored = session_title(schedule, fired, ZoneInfo("Asia/Shanghai"))  # type: ignore[arg-type]
    assert stored == "早班检查 · 2026-12-02 13:36", "the stored title is unchanged"
    row = SimpleNamespace(id="s1", title=stored, updated_at=fired, pinned=False)
    chinese, english = session_from_row(row, "zh-CN"), session_from_row(row, "en")
    assert chinese.title == "早班检查" and chinese.updated == "2026/12/2 13:36"
    assert english.title == "早班检查" and english.updated == "Dec 2, 2026, 13:36"
    assert session_from_row(
        SimpleNamespace(id="s2", title="风量 · 计算", updated_at=fired), "zh-CN"
    ).title == ("风量 · 计算")


def test_an_answer_the_server_stopped_says_so_live_and_stored() -> None:
    """Tester: at shutdown the tab never showed the shutdown sentence; a stopped bubble read only
    "已停止", as if the person had pressed Stop."""
    shutdown = ev.Error(message=SERVER_STOPPING.message, code="cancelled")
    live = to_message(reduce_event(LiveAnswer(text="Ventilation", lang="zh-CN"), shutdown))
    assert (live.status, live.notice, live.error) == (
        "stopped",
        MESSAGES["zh-CN"]["run_error.server_stopping"],
        "",
    )
    row = SimpleNamespace(
        id="m1",
        role="assistant",
        content="Ventilation",
        status="cancelled",
        citations=[],
        usage=None,
        tool_calls=[],
    )
    run = SimpleNamespace(error_code="cancelled", error=SERVER_STOPPING.message, duration_ms=300)
    stored = message_from_row(row, "en", run)
    assert (stored.status, stored.notice) == ("stopped", SERVER_STOPPING.message)
    stop = ev.Error(message=CANCELLED.message, code="cancelled")
    assert to_message(reduce_event(LiveAnswer(text="x"), stop)).notice == "", "the person's own Stop"
    # try20: stopped by the shutdown before any text, the bubble read only "已停止" again
    early = ev.Error(message=SERVER_STOPPING_EARLY.message, code="cancelled")
    assert to_message(reduce_event(LiveAnswer(lang="zh-CN"), early)).notice == (
        "服务器正在关闭，运行在生成回答之前已被停止。"
    )
    bare = ev.Error(message=CANCELLED_EARLY.message, code="cancelled")
    assert to_message(reduce_event(LiveAnswer(lang="zh-CN"), bare)).notice == "", "the person's own Stop"


def test_parallel_write_todos_refused_leave_the_reloaded_list_as_it_was() -> None:
    """try14: after a reload the panel showed the items of two refused parallel ``write_todos``
    calls (live it showed the list before them), and their cards langchain's English."""
    from ventapp.agent.nodeless_middleware import PARALLEL_TODOS_ERROR
    from ventapp.agent.tool_failure_words import failure_for_person

    kept = [{"content": "Read the rule", "status": "in_progress"}]
    refused = {"tool": "write_todos", "content": PARALLEL_TODOS_ERROR, "error": True}
    row = _answer_row(
        tool_calls=[
            {"tool_call_id": "t1", "tool": "write_todos", "args": {"todos": kept}, "content": "ok"},
            {**refused, "tool_call_id": "t2", "args": {"todos": [{"content": "A", "status": "pending"}]}},
            {**refused, "tool_call_id": "t3", "args": {"todos": [{"content": "B", "status": "pending"}]}},
        ],
    )
    message = message_from_row(row, "zh-CN")
    assert [(t.content, t.status) for t in message.todos] == [("Read the rule", "in_progress")]
    assert (
        failure_for_person(PARALLEL_TODOS_ERROR, "zh-CN")
        == "同一步里两次更新了任务清单，两次都没有生效；智能体每一步只更新一次。"
    )
    assert "neither update was kept" in failure_for_person(PARALLEL_TODOS_ERROR, "en")
