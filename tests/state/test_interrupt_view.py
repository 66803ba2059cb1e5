"""The pause card's pure logic: the view built from an ``interrupt`` event, the answer built from
its inputs, and the cost / context figures shown around an answer."""

from __future__ import annotations

from types import SimpleNamespace

from ventapp.agent import events as ev
from ventapp.agent.interrupts import ResumeAnswer
from ventapp.agent.pipeline import CANCELLED_MARKER
from ventapp.state.interrupt_view import (
    approval_answer,
    interrupt_view,
    parse_args,
    plan_answer,
    questions_answer,
    reject_all,
    submit_label,
    with_mode,
)
from ventapp.state.live_answer import (
    LiveAnswer,
    continued,
    live_from_message,
    reduce_event,
    to_message,
)
from ventapp.state.usage_words import context_label, context_percent, cost_text, usage_footer
from ventapp.state.views import message_from_row
from ventapp.tools.registry import load_builtin_tools

DEFAULT_REASON = "Tool execution requires approval\n\nTool: calculate\nArgs: {'expression': '1+1'}"


def approval(*expressions: str, token: str = "tok-1") -> ev.Interrupt:
    requests = [
        {"tool": "calculate", "args": {"expression": e}, "reason": DEFAULT_REASON, "reason_code": "default"}
        for e in expressions
    ]
    return ev.Interrupt(
        kind="tool_approval",
        tool_approval={**requests[0], "side_effect": True, "count": len(requests), "requests": requests},
        interrupt_token=token,
        tool_call_ids=[f"call_{i}" for i in range(len(requests))],
    )


# --- building the card ---------------------------------------------------------------------


def test_interrupt_view_lists_every_call_of_the_batch_in_order() -> None:
    view = interrupt_view(approval("1+1", "2*3", "4-1"), "en")

    assert (view.kind, view.token) == ("tool_approval", "tok-1")
    assert [call.index for call in view.calls] == [0, 1, 2]
    assert ['"expression": "2*3"' in call.args_json for call in view.calls] == [False, True, False]
    assert view.calls[0].reason == "", "deepagents' default reason repeats the card"
    assert view.calls[0].edit_text == view.calls[0].args_json
    assert view.submit_label == "Approve 3"
    assert interrupt_view(approval("1+1"), "en").submit_label == "Approve"
    assert interrupt_view(approval("1+1", "2")).submit_label == "批准 2 项", "Chinese by default"


def test_interrupt_view_keeps_a_reason_of_its_own() -> None:
    event = approval("1")
    event.tool_approval["requests"][0].update(reason=" Writes report.md into the workspace. ", reason_code="")

    assert interrupt_view(event).calls[0].reason == "Writes report.md into the workspace."


def test_interrupt_view_for_questions_and_plan() -> None:
    asked = interrupt_view(
        ev.Interrupt(kind="ask_user", ask_user={"questions": ["How many people?", " "]}, interrupt_token="t")
    )
    plan = interrupt_view(ev.Interrupt(kind="plan", message="1. Search\n2. Calculate", interrupt_token="t"))

    assert (asked.kind, asked.questions) == ("ask_user", ["How many people?"])
    assert (plan.kind, plan.plan) == ("plan", "1. Search\n2. Calculate")


def test_interrupt_view_is_empty_without_a_card_to_show() -> None:
    assert interrupt_view(None).kind == ""
    assert interrupt_view(ev.Interrupt(kind="message", message="?", interrupt_token="t")).kind == ""
    assert interrupt_view(approval("1", token="")).kind == ""


def test_with_mode_toggles_one_call_and_the_button_says_what_is_sent() -> None:
    view = interrupt_view(approval("1", "2", "3"), "en")

    view = with_mode(view, 1, "reject")
    assert [call.mode for call in view.calls] == ["approve", "reject", "approve"]
    assert view.submit_label == "Send: 2 approve · 1 reject"
    view = with_mode(view, 2, "edit")
    assert view.submit_label == "Send: 1 approve · 1 edit · 1 reject"
    view = with_mode(with_mode(view, 1, "reject"), 2, "edit")
    assert view.submit_label == "Approve 3"
    assert with_mode(view, 0, "explode") is view

    single = interrupt_view(approval("1"))
    assert submit_label(with_mode(single, 0, "reject").calls, "en") == "Reject"
    assert submit_label(with_mode(single, 0, "edit").calls, "en") == "Run with edits"
    assert (
        with_mode(interrupt_view(approval("1", "2")), 1, "reject").submit_label == "提交：1 项批准 · 1 项拒绝"
    )


# --- building the answer -------------------------------------------------------------------


def test_approval_answer_has_one_decision_per_request_in_order() -> None:
    view = with_mode(with_mode(interrupt_view(approval("1", "2", "3")), 1, "edit"), 2, "reject")
    form = {"args_1": '{"expression": "2*21"}', "reason_2": "  use the handbook value  "}

    answer, shown = approval_answer(view, form)

    assert answer == ResumeAnswer(
        decisions=[
            {"type": "approve"},
            {"type": "edit", "args": {"expression": "2*21"}},
            {"type": "reject", "message": "用户拒绝了这次操作，理由：use the handbook value"},
        ]
    )
    assert len(answer.decisions) == len(view.calls)
    assert shown.calls[1].edit_text == '{"expression": "2*21"}' and shown.error == ""


def test_approval_answer_all_approved_by_default() -> None:
    answer, _ = approval_answer(interrupt_view(approval("1", "2")), {})

    assert answer is not None and answer.decisions == [{"type": "approve"}, {"type": "approve"}]


def test_a_reject_without_reason_gives_the_model_one_in_the_cards_language() -> None:
    for lang, reason in (
        ("zh-CN", "用户拒绝了这次操作，没有说明原因。"),
        ("en", "The user rejected this action without giving a reason."),
    ):
        answer, _ = approval_answer(
            with_mode(interrupt_view(approval("1"), lang), 0, "reject"), {"reason_0": " "}
        )

        assert answer is not None and answer.decisions == [{"type": "reject", "message": reason}]


def test_a_reject_with_a_reason_tells_the_model_the_call_was_rejected() -> None:
    """Tester: with only the reason, the model took "不需要计算，直接回答" for the calculator's
    result and answered "结果是 不需要计算，直接回答。"."""
    for lang, message in (
        ("zh-CN", "用户拒绝了这次操作，理由：不需要计算，直接回答"),
        ("en", "The user rejected this action. Reason: 不需要计算，直接回答"),
    ):
        answer, shown = approval_answer(
            with_mode(interrupt_view(approval("1"), lang), 0, "reject"),
            {"reason_0": " 不需要计算，直接回答 "},
        )

        assert answer is not None and answer.decisions == [{"type": "reject", "message": message}]
        assert shown.calls[0].reject_reason == "不需要计算，直接回答", "the card keeps what was typed"


def test_the_card_names_each_tool_by_its_catalogue_name_in_the_cards_language() -> None:
    """Tester: the card's header showed the raw name ``calculate``, not 计算器."""
    load_builtin_tools()
    (zh,) = interrupt_view(approval("1")).calls
    (en,) = interrupt_view(approval("1"), "en").calls
    assert (zh.label, zh.tool) == ("计算器", "calculate") and en.label == "Calculator"


def test_the_submit_button_icon_says_what_it_sends() -> None:
    """Tester: the button that sends a rejection had a ✓."""
    view = interrupt_view(approval("1", "2"), "en")
    assert view.submit_icon == "check"
    assert with_mode(view, 0, "reject").submit_icon == "send", "a mix"
    assert with_mode(with_mode(view, 0, "reject"), 1, "reject").submit_icon == "ban"
    assert reject_all(view).submit_icon == "ban"
    assert with_mode(interrupt_view(approval("1")), 0, "reject").submit_icon == "ban"
    assert with_mode(interrupt_view(approval("1")), 0, "edit").submit_icon == "send"


def test_approval_answer_invalid_edit_json_is_an_error_on_that_call() -> None:
    view = with_mode(interrupt_view(approval("1", "2"), "en"), 0, "edit")

    answer, shown = approval_answer(view, {"args_0": '{"expression": "1+1",}'})

    assert answer is None
    assert shown.calls[0].error.startswith("The arguments are not valid JSON")
    assert "line 1" in shown.calls[0].error
    assert shown.calls[1].error == ""
    assert shown.error and shown.calls[0].edit_text == '{"expression": "1+1",}', "the typed text is kept"


def test_parse_args_needs_a_json_object() -> None:
    assert parse_args('{"a": 1}') == ({"a": 1}, "")
    assert parse_args("[1, 2]", "en")[1] == 'The arguments must be a JSON object, e.g. {"expression": "1+1"}.'
    assert parse_args("[1, 2]")[1] == '参数必须是 JSON 对象，例如 {"expression": "1+1"}。'
    assert parse_args("")[0] is None


def test_questions_answer_needs_one_answer() -> None:
    view = interrupt_view(
        ev.Interrupt(kind="ask_user", ask_user={"questions": ["People?", "Area?"]}, interrupt_token="t"),
        "en",
    )

    assert questions_answer(view, {"answer_0": " ", "answer_1": ""})[0] is None
    assert questions_answer(view, {})[1].error == "Answer at least one question."
    answer, shown = questions_answer(view, {"answer_0": " Twelve ", "answer_1": ""})
    assert answer == ResumeAnswer(answers=["Twelve", ""]) and shown.error == ""


def test_plan_answer_approve_or_send_back_with_feedback() -> None:
    view = interrupt_view(ev.Interrupt(kind="plan", message="1. Do it", interrupt_token="t"), "en")

    assert plan_answer(view, approved=True)[0] == ResumeAnswer(approved=True, feedback="")
    assert plan_answer(view, False, "  ")[0] is None
    assert plan_answer(view, False, "")[1].error == "Write what should change in the plan."
    assert plan_answer(view, False, " Add a velocity check. ")[0] == ResumeAnswer(
        approved=False, feedback="Add a velocity check."
    )


# --- the paused answer around the card -----------------------------------------------------


def test_reduce_card_interrupt_keeps_the_event_and_adds_no_notice() -> None:
    event = approval("1")
    live = reduce_event(LiveAnswer(text="Let me check.", status="正在执行"), event)

    assert live.paused and live.interrupt is event
    assert (live.notice, live.status) == ("", "")
    message = to_message(live)
    assert message.status == "waiting" and message.notice, "left unanswered: a note says so"


def test_continued_answer_separates_new_text_and_drops_the_card() -> None:
    paused = reduce_event(LiveAnswer(text="Checking.\n"), approval("1"))

    start = continued(paused, "正在思考…")

    assert (start.text, start.status, start.paused, start.interrupt) == (
        "Checking.\n\n",
        "正在思考…",
        False,
        None,
    )
    done = reduce_event(
        reduce_event(start, ev.Token(content="The result is 60.")), ev.Done(duration_ms=5, usage=ev.Usage())
    )
    assert to_message(done).content == "Checking.\n\nThe result is 60."
    assert to_message(continued(LiveAnswer(), "")).content == ""


def test_live_from_message_restores_a_stored_paused_answer() -> None:
    row = SimpleNamespace(
        id="m1",
        role="assistant",
        content="",
        tool_calls=[
            {"tool_call_id": "c1", "tool": "calculate", "args": {"expression": "1"}, "content": None}
        ],
        citations=[],
        usage={},
        status="waiting",
    )

    live = live_from_message(message_from_row(row))

    assert live.paused and [(card.tool_call_id, card.done) for card in live.tools] == [("c1", False)]


# --- Stop ----------------------------------------------------------------------------------


def test_stopped_answer_keeps_its_text_with_the_marker_and_is_not_an_error() -> None:
    live = reduce_event(
        LiveAnswer(text="Partial answer"),
        ev.Error(message="Stopped. The partial answer has been kept.", code="cancelled"),
    )

    message = to_message(live)

    assert (message.status, message.error) == ("stopped", "")
    assert message.content == "Partial answer", "the Stopped note replaces the legacy marker"
    stored = SimpleNamespace(
        id="m", role="assistant", content="x" + CANCELLED_MARKER, tool_calls=[], citations=[], usage={}
    )
    reloaded = message_from_row(SimpleNamespace(**vars(stored), status="cancelled"))
    assert (reloaded.status, reloaded.error, reloaded.content) == ("stopped", "", "x"), "live == reloaded"


def test_a_reloaded_answer_reads_as_it_did_live_with_its_run() -> None:
    """The footer's duration and the stop reason come from the run that wrote the answer."""
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    cut = SimpleNamespace(
        id="m", role="assistant", content="part", tool_calls=[], citations=[], usage=usage, status="failed"
    )
    run = SimpleNamespace(duration_ms=2400, error_code="quota", error="Daily token limit reached (50).")
    live = reduce_event(  # the closing frame carries the saved partial answer's duration and usage
        LiveAnswer(text="part", lang="en"),
        ev.Error(
            message="Daily token limit reached (50).",
            code="quota",
            duration_ms=2400,
            usage=ev.Usage(**usage),
        ),
    )

    reloaded, shown = message_from_row(cut, "en", run), to_message(live)

    assert (reloaded.error, reloaded.error_detail, reloaded.footer) == (
        shown.error,
        shown.error_detail,
        shown.footer,
    )
    assert reloaded.error.startswith("You have used today's token allowance")
    assert reloaded.footer.startswith("2.4 sec")
    assert message_from_row(cut, "en").error == "This answer did not finish because the run failed."


def test_timeout_is_still_an_error() -> None:
    live = reduce_event(LiveAnswer(text="x"), ev.Error(message="Too long.", code="timeout"))

    message = to_message(live)
    assert (message.status, message.error) == ("error", "回答耗时过长，已被停止。")
    assert message.error_detail == "Too long."


# --- cost and context ----------------------------------------------------------------------


def test_cost_text_in_micro_units_of_the_currency() -> None:
    assert cost_text(ev.Usage(cost_micros=123, currency="CNY")) == "¥0.000123"
    assert cost_text({"cost_micros": 1_500_000, "currency": "USD"}) == "$1.50"
    assert cost_text(ev.Usage(cost_micros=0, currency=None)) == ""
    assert cost_text(None) == ""


def test_usage_footer_shows_tokens_and_cost() -> None:
    usage = ev.Usage(
        input_tokens=822,
        output_tokens=4,
        total_tokens=826,
        context_tokens=822,
        context_limit=128000,
        cost_micros=83,
        currency="CNY",
    )

    assert (
        usage_footer(usage, 37, "en")
        == "0 sec · 826 tokens (822 in · 4 out) · ¥0.000083 · context 822 / 128K"
    )
    message = to_message(LiveAnswer(text="ok", usage=usage, duration_ms=37))
    assert (message.context_tokens, message.context_limit) == (822, 128000)


def test_context_gauge_percent_and_label() -> None:
    assert context_percent(1100, 128000) == 1
    assert context_percent(64000, 128000) == 50
    assert context_percent(200, 100) == 100
    assert context_percent(10, 0) == 0
    assert context_label(1100, 128000, "en") == "Context: 1.1K of 128K tokens (1%)"
    assert context_label(1100, 128000) == "上下文：已用 1,100 / 12.8万 token（1%）"
    assert context_label(5, 0) == ""


def test_approval_reason_is_worded_by_its_code_in_the_ui_language() -> None:
    """Found by trying it: the Chinese card carried "… needs your approval before it runs."."""
    load_builtin_tools()  # the labels
    event = approval("1", "2", "3")
    requests = event.tool_approval["requests"]
    requests[0].update(
        reason="计算器 (calculate) needs your approval before it runs.", reason_code="needs_approval"
    )
    requests[1].update(reason="Tool execution requires approval", reason_code="default")
    requests[2].update(reason="Writes report.md into the workspace.", reason_code="")

    chinese = [call.reason for call in interrupt_view(event).calls]
    english = [call.reason for call in interrupt_view(event, "en").calls]

    assert chinese == ["计算器需要你批准后才会运行。", "", "Writes report.md into the workspace."]
    assert english[0] == "Calculator needs your approval before it runs." and english[1] == ""
    # Only the code decides: an English sentence that merely ends like ours is a reason of its own.
    requests[2]["reason"] = "This one needs your approval before it runs."
    assert interrupt_view(event, "en").calls[2].reason == "This one needs your approval before it runs."


def test_bad_json_is_said_in_the_page_language_only() -> None:
    """Tester: the Chinese sentence carried Python's English reason ("Expecting value")."""
    _, zh = parse_args('{"expression": }')
    assert zh == "参数不是有效的 JSON（第 1 行，第 16 列）。"
    assert parse_args('{"expression": }', "en")[1] == "The arguments are not valid JSON (line 1, column 16)."
