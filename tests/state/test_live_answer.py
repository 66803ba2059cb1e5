"""The pure reducer of the live answer and its batching pump (``ventapp.state.live_answer``)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

import pytest

from tests.state.chat_harness import USAGE, call, fold, result, stream, tokens
from ventapp.agent import events as ev
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.state.live_answer import (
    STOPPED_CODE,
    LiveAnswer,
    announcement,
    changed_fields,
    pump,
    reduce_event,
    to_message,
)

# --- reducer -----------------------------------------------------------------------------


def test_reduce_tool_result_attaches_to_its_call_when_same_tool_called_twice() -> None:
    live = fold([call("call_a", "1+1"), call("call_b", "2*3"), result("call_b", "6"), result("call_a", "2")])

    assert [card.tool_call_id for card in live.tools] == ["call_a", "call_b"]
    assert [card.content for card in live.tools] == ["2", "6"]
    assert all(card.done for card in live.tools)
    assert '"expression": "2*3"' in live.tools[1].args_json
    assert live.tools[0].cn_tool == "计算器"


def test_each_model_calls_reasoning_is_a_paragraph_of_its_own() -> None:
    """Reasoning before a tool call and after its result read as two paragraphs, not "answering.The user"."""
    thought = [ev.ThinkingToken(content="I am "), ev.ThinkingToken(content="answering.")]
    live = fold(
        [*thought, call("call_a", "1+1"), result("call_a", "2"), ev.ThinkingToken(content="The user")]
    )

    assert live.reasoning == "I am answering.\n\nThe user"


def test_reduce_tool_card_is_running_until_its_result_arrives() -> None:
    live = fold([call("call_a", "1+1"), call("call_b", "2*3"), result("call_a", "2")])

    assert [(card.tool_call_id, card.done) for card in live.tools] == [("call_a", True), ("call_b", False)]
    assert live.tools[1].content == ""


def test_reduce_tool_result_error_marks_only_that_card() -> None:
    live = fold(
        [call("c1", "1/0"), call("c2", "1"), result("c1", "division by zero", error=True), result("c2", "1")]
    )

    assert [card.error for card in live.tools] == [True, False]
    assert live.tools[0].content == "division by zero"


def test_reduce_repeated_tool_call_event_keeps_the_result() -> None:
    live = fold([call("c1", "1+1"), result("c1", "2"), call("c1", "1+1")])

    assert len(live.tools) == 1
    assert (live.tools[0].content, live.tools[0].done) == ("2", True)


def test_reduce_tool_result_without_call_still_gets_a_card() -> None:
    live = fold([result("orphan", "42")])

    assert [(card.tool_call_id, card.content) for card in live.tools] == [("orphan", "42")]


def test_reduce_tokens_concatenate_and_clear_the_status_line() -> None:
    live = fold([ev.Thinking(message="正在思考…", cn_agent="助手")])
    assert live.status == "正在思考…"
    executing = ev.Executing(
        message="正在执行：计算器", cn_agent="助手", tools=["calculate"], cn_tools=["计算器"]
    )
    live = fold([executing], live)
    assert live.status == "正在调用计算器…", "no space between Chinese words"
    unknown = ev.Executing(
        message="正在执行：未知", cn_agent="助手", tools=["unknown_tool"], cn_tools=["未知"]
    )
    assert fold([unknown], LiveAnswer(lang="en")).status == "Calling unknown_tool…", "never the Chinese label"
    assert fold([unknown]).status == "正在调用未知…"
    twice = ev.Executing(
        message="", cn_agent="助手", tools=["write_todos", "write_todos"], cn_tools=["任务清单", "任务清单"]
    )
    assert fold([twice]).status == "正在调用任务清单…", "try14: not 任务清单、任务清单"

    live = fold([ev.Token(content="The "), ev.Token(content="result "), ev.Token(content="is 60.")], live)

    assert live.text == "The result is 60."
    assert live.status == ""


def test_reduce_citations_replace_the_previous_list() -> None:
    first = ev.Citations(items=[ev.Citation(title="Fan laws", url="/kb/fan-laws")])
    second = ev.Citations(
        items=[
            ev.Citation(title="Fan laws", url="/kb/fan-laws"),
            ev.Citation(title="Methane", url="/kb/methane", snippet="1.0 %"),
        ]
    )

    live = fold([first, second])

    assert [(c.title, c.url) for c in live.citations] == [
        ("Fan laws", "/kb/fan-laws"),
        ("Methane", "/kb/methane"),
    ]
    assert live.citations[1].snippet == "1.0 %"
    assert fold([second, ev.Citations(items=[], model_only=True)]).citations == ()


def test_reduce_error_sets_error_and_the_message_shows_it() -> None:
    live = fold(
        [
            ev.Token(content="partial"),
            ev.Error(message="The model endpoint could not be reached.", code="model_unreachable"),
        ]
    )

    assert live.error == "The model endpoint could not be reached."
    assert live.error_code == "model_unreachable"
    message = to_message(live)
    assert message.status == "error"
    assert message.error == "模型服务没有响应，请稍后再试。", "plain words for the person at the keyboard"
    assert message.error_detail == live.error, "the pipeline's sentence behind Details"
    assert message.content == "partial"


def test_reduce_done_sets_usage_and_the_footer() -> None:
    live = fold([ev.Token(content="ok"), ev.Done(duration_ms=2400, usage=USAGE)])

    assert live.usage == USAGE
    assert live.duration_ms == 2400
    message = to_message(live)
    assert message.status == "done"
    assert message.footer == "2.4秒 · 1,234 token（输入 1,100 · 输出 134） · 上下文 1,100 / 12.8万"
    english = to_message(dataclasses.replace(live, lang="en"))
    assert english.footer == "2.4 sec · 1,234 tokens (1,100 in · 134 out) · context 1.1K / 128K"


@pytest.mark.parametrize(
    ("closing", "stored_status"),
    [
        (ev.Done(duration_ms=150, usage=USAGE), "complete"),
        (ev.Error(message="Stopped.", code="cancelled", duration_ms=150, usage=USAGE), "cancelled"),
        (ev.Error(message="Timed out.", code="timeout", duration_ms=150, usage=USAGE), "failed"),
    ],
)
def test_the_streaming_tabs_footer_is_what_a_re_read_shows(
    closing: ev.ContractEvent, stored_status: str
) -> None:
    """A tab that streamed the answer and a tab that re-read it showed different footers."""
    from types import SimpleNamespace

    from ventapp.state.views import message_from_row

    live = to_message(fold([ev.Token(content="ok"), closing]))
    row = SimpleNamespace(
        id=1, role="assistant", content="ok", status=stored_status, citations=[], tool_calls=[],
        usage=USAGE.model_dump(mode="json"),
    )  # fmt: skip
    run = SimpleNamespace(duration_ms=150, error_code=getattr(closing, "code", None), error="")
    assert live.footer == message_from_row(row, DEFAULT_LANG, run).footer != ""


def test_reduce_todos_and_interrupt() -> None:
    todos = ev.UpdatedTodoList(
        todos=[{"content": "Size the fan", "status": "completed"}, {"content": "Check gas", "status": "odd"}]
    )
    live = fold([todos, ev.Interrupt(message="Approve writing report.md?")])

    assert [(t.content, t.status) for t in live.todos] == [
        ("Size the fan", "completed"),
        ("Check gas", "pending"),
    ]
    assert live.notice == "Approve writing report.md?"
    assert to_message(live).status == "waiting"


def test_reduce_keeps_untouched_fields_identical() -> None:
    before = fold([call("c1", "1"), ev.Citations(items=[ev.Citation(title="A", url="/kb/a")])])

    after = reduce_event(before, ev.Token(content="x"))

    assert changed_fields(before, after) == ["text"]
    assert after.tools is before.tools
    assert reduce_event(after, ev.AgentDone(agent="main", cn_agent="助手", duration_ms=1)) is after


# --- pump (token batching) ---------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.flushes: list[LiveAnswer] = []

    async def __call__(self, before: LiveAnswer, after: LiveAnswer) -> None:
        self.flushes.append(after)


async def test_pump_flushes_200_instant_tokens_a_handful_of_times() -> None:
    recorder = Recorder()

    final = await pump(stream([*tokens(200), ev.Done(duration_ms=5, usage=USAGE)]), recorder)

    assert final.text == "".join(f"w{i} " for i in range(200))
    assert final.usage == USAGE
    assert 1 <= len(recorder.flushes) <= 3


async def test_pump_flushes_paced_tokens_about_every_interval() -> None:
    recorder = Recorder()

    final = await pump(stream(tokens(40), pause_s=0.01), recorder, interval_s=0.05)

    assert final.text.startswith("w0 w1 ")
    # 40 tokens over >= 0.4 s at 50 ms: several flushes while streaming, far fewer than 40.
    assert 3 <= len(recorder.flushes) <= 15
    texts = [f.text for f in recorder.flushes]
    assert texts == sorted(texts, key=len) and len(set(texts)) == len(texts)


async def test_pump_flushes_buffered_text_when_the_stream_stalls() -> None:
    recorder = Recorder()

    async def stalled() -> AsyncIterator[ev.ContractEvent]:
        for token in tokens(3):
            yield token
        await asyncio.sleep(0.3)
        yield ev.Done(duration_ms=300, usage=USAGE)

    await pump(stalled(), recorder, interval_s=0.05)

    assert "w0 w1 w2 " in [f.text for f in recorder.flushes]


async def test_pump_flushes_tool_events_at_once_but_not_terminal_ones() -> None:
    recorder = Recorder()
    events = [*tokens(5), call("c1", "1+1"), result("c1", "2"), ev.Error(message="boom", code="internal")]

    final = await pump(stream(events), recorder)

    assert [card.done for card in recorder.flushes[-1].tools] == [True]
    assert any(f.tools and not f.tools[0].done for f in recorder.flushes)
    assert all(f.error == "" for f in recorder.flushes)
    assert final.error == "boom"


async def test_pump_reraises_a_broken_stream() -> None:
    async def broken() -> AsyncIterator[ev.ContractEvent]:
        yield ev.Token(content="a")
        raise ValueError("bug")

    with pytest.raises(ValueError, match="bug"):
        await pump(broken(), Recorder())


def test_reduce_tool_result_pretty_prints_json_only() -> None:
    live = fold(
        [
            call("c1", "x"),
            result("c1", '{"sources": [{"title": "甲"}]}'),
            call("c2", "y"),
            result("c2", "{not json"),
        ]
    )

    assert live.tools[0].content == '{\n  "sources": [\n    {\n      "title": "甲"\n    }\n  ]\n}'
    assert live.tools[1].content == "{not json"


@pytest.mark.parametrize(
    ("final", "waiting", "said"),
    [
        (LiveAnswer(lang="en", text="done"), False, "The answer is complete."),
        (
            LiveAnswer(lang="en", text="partial", error="stopped", error_code=STOPPED_CODE),
            False,
            "The answer was stopped.",
        ),
        (
            LiveAnswer(lang="zh-CN", text="部分", error="stopped", error_code=STOPPED_CODE),
            False,
            "回答已停止。",
        ),
        (LiveAnswer(lang="en", paused=True), True, "The agent is waiting for your decision."),
    ],
)
def test_the_live_region_says_how_the_answer_ended(final: LiveAnswer, waiting: bool, said: str) -> None:
    assert announcement(final, waiting) == said


def test_announcement_follows_a_language_switched_while_the_answer_streamed() -> None:
    """A tester: after switching to 中文 mid-stream, screen readers still heard the English sentence."""
    stopped = LiveAnswer(text="partial", error="stopped", error_code=STOPPED_CODE, lang="en")
    assert announcement(stopped, False, "zh-CN") == t("a11y.stopped", "zh-CN")
    assert announcement(LiveAnswer(text="done", lang="en"), False, "zh-CN") == t("a11y.done", "zh-CN")
    assert t("a11y.done", "zh-CN") != t("a11y.done", "en")


def test_a_quota_stop_is_announced_as_the_quota_not_as_a_failed_answer() -> None:
    """Tester: a quota refusal was announced as "回答失败" (answer failed)."""
    quota = LiveAnswer(text="partial", error="quota used up", error_code="quota", lang="zh-CN")
    spoken = announcement(quota, False)
    assert "额度" in spoken and "零点" in spoken and "重置" in spoken and "失败" not in spoken
    assert "resets at midnight" in announcement(quota, False, "en") and "failed" not in announcement(
        quota, False, "en"
    )
    failed = LiveAnswer(text="", error="boom", error_code="internal", lang="zh-CN")
    assert announcement(failed, False).startswith("回答失败"), "a real failure still says so"
