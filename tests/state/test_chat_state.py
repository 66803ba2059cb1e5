"""The chat UI's state: the pure event reducer, the token batching pump, and ChatState headless.

The headless tests run the real Reflex event processor (``BaseStateEventProcessor`` with
``StateManagerMemory``) and read the deltas it would send to the browser; only the run
pipeline is replaced by a fake that yields real contract events.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import pytest
from reflex.event import Event
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex.state import State
from reflex_base.event.processor import BaseStateEventProcessor
from reflex_base.utils.format import format_event_handler

from ventapp.agent import events as ev
from ventapp.agent.pipeline import ChatRejected
from ventapp.state import chat_state as cs
from ventapp.state import turns
from ventapp.state.live_answer import LiveAnswer, changed_fields, pump, reduce_event, to_message
from ventapp.state.views import message_from_row, usage_footer


def fold(events: Iterable[ev.ContractEvent], live: LiveAnswer | None = None) -> LiveAnswer:
    live = live or LiveAnswer()
    for event in events:
        live = reduce_event(live, event)
    return live


def call(tool_call_id: str, expression: str) -> ev.ToolCall:
    return ev.ToolCall(
        tool="calculate", cn_tool="计算器", args={"expression": expression}, tool_call_id=tool_call_id
    )


def result(tool_call_id: str, content: str, error: bool = False) -> ev.ToolResult:
    return ev.ToolResult(
        tool="calculate", cn_tool="计算器", content=content, error=error, tool_call_id=tool_call_id
    )


USAGE = ev.Usage(
    input_tokens=1100, output_tokens=134, total_tokens=1234, context_tokens=1100, context_limit=128000
)


# --- reducer -----------------------------------------------------------------------------


def test_reduce_tool_result_attaches_to_its_call_when_same_tool_called_twice() -> None:
    live = fold([call("call_a", "1+1"), call("call_b", "2*3"), result("call_b", "6"), result("call_a", "2")])

    assert [card.tool_call_id for card in live.tools] == ["call_a", "call_b"]
    assert [card.content for card in live.tools] == ["2", "6"]
    assert all(card.done for card in live.tools)
    assert '"expression": "2*3"' in live.tools[1].args_json
    assert live.tools[0].cn_tool == "计算器"


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
    assert live.status == "正在调用 计算器…"
    unknown = ev.Executing(message="正在执行：未知", cn_agent="助手", tools=["unknown_tool"], cn_tools=["未知"])
    assert fold([unknown], LiveAnswer(lang="en")).status == "Calling unknown_tool…", "never the Chinese label"
    assert fold([unknown]).status == "正在调用 未知…"

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
    assert message.footer == "2.4秒 · 1,234 token（输入 1,100 · 输出 134） · 上下文 1100 / 12.8万"
    english = to_message(dataclasses.replace(live, lang="en"))
    assert english.footer == "2.4 sec · 1,234 tokens (1,100 in · 134 out) · context 1.1K / 128K"


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


async def stream(events: Iterable[ev.ContractEvent], pause_s: float = 0.0) -> AsyncIterator[ev.ContractEvent]:
    for event in events:
        if pause_s:
            await asyncio.sleep(pause_s)
        yield event


class Recorder:
    def __init__(self) -> None:
        self.flushes: list[LiveAnswer] = []

    async def __call__(self, before: LiveAnswer, after: LiveAnswer) -> None:
        self.flushes.append(after)


def tokens(count: int) -> list[ev.Token]:
    return [ev.Token(content=f"w{i} ") for i in range(count)]


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


# --- views -------------------------------------------------------------------------------


def test_message_from_row_restores_tool_cards_citations_and_footer() -> None:
    row = SimpleNamespace(
        id="m1",
        role="assistant",
        content="60",
        tool_calls=[
            {
                "tool_call_id": "c1",
                "tool": "calculate",
                "cn_tool": "计算器",
                "args": {"e": "1"},
                "content": "1",
                "error": False,
            },
            {
                "tool_call_id": "c2",
                "tool": "calculate",
                "cn_tool": "计算器",
                "args": {},
                "content": None,
                "error": False,
            },
        ],
        citations=[{"title": "Fan laws", "url": "/kb/fan-laws", "snippet": "s", "score": 1.0}],
        usage=USAGE.model_dump(mode="json"),
        status="failed",
    )

    view = message_from_row(row, "en")

    assert [(t.tool_call_id, t.done) for t in view.tools] == [("c1", True), ("c2", False)]
    assert view.citations[0].url == "/kb/fan-laws"
    assert view.status == "error" and view.error == "This answer did not finish because the run failed."
    assert view.footer.startswith("1,234 tokens")
    assert message_from_row(row).error == "运行失败，这个回答没有完成。"


def test_usage_footer_marks_estimates_and_hides_empty_usage() -> None:
    estimate = ev.Usage(input_tokens=10, output_tokens=5, total_tokens=15, usage_source="estimate")

    assert usage_footer(estimate, 1500, "en") == "1.5 sec · 15 tokens (10 in · 5 out) · estimated"
    assert usage_footer(estimate, 1500) == "1.5秒 · 15 token（输入 10 · 输出 5） · 估算"
    assert usage_footer(None) == ""
    assert usage_footer({}, 200, "en") == "0.2 sec"


def test_clean_user_name() -> None:
    assert cs.clean_user_name("  Li \t Wei ") == ("Li Wei", "")
    assert cs.clean_user_name("   ")[0] == ""
    assert cs.clean_user_name("x" * 129)[1]


def test_clean_user_name_applies_the_api_rule() -> None:
    """Issue 17 item 9: the dialog keeps what the API would resolve, and refuses what it refuses."""
    assert cs.clean_user_name("Jose\u0301\u00a0") == ("Jos\u00e9", "")
    for bad in ("ali\u200bce", "al\x00ice", "alice\x1b[31m"):
        name, problem = cs.clean_user_name(bad, "en")
        assert name == "" and "invisible" in problem, bad
    assert cs.clean_user_name("x" * 129, "zh-CN")[1] == "名字最多 128 个字符。"


# --- ChatState headless ------------------------------------------------------------------

SESSION = "11111111-2222-4333-8444-555555555555"
StateDelta = Mapping[str, Mapping[str, Any]]


class FakeRun:
    """Stands in for ``ChatRun``: the same attributes, real contract events."""

    def __init__(self, events: list[ev.ContractEvent], pause_s: float) -> None:
        self.session_id, self.run_id, self.trace_id = SESSION, "run-1", "trace-1"
        self._events, self._pause_s = events, pause_s
        self.released = False

    def release(self) -> None:
        self.released = True

    def events(self) -> AsyncIterator[ev.ContractEvent]:
        return stream(self._events, self._pause_s)


@pytest.fixture
def pipeline(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """Replace the run pipeline and the database reads used by ChatState."""
    fake = SimpleNamespace(requests=[], events=[], pause_s=0.0, reject=None, runs=[])

    async def start_chat(runtime: object, request: Any) -> FakeRun:
        fake.requests.append(request)
        if fake.reject is not None:
            raise fake.reject
        run = FakeRun(fake.events, fake.pause_s)
        fake.runs.append(run)
        return run

    async def load_sessions(user_name: str, lang: str = "zh-CN") -> list[Any]:
        return [cs.SessionView(id=SESSION, title="calc", updated=datetime(2025, 1, 1).isoformat())]

    monkeypatch.setattr(turns, "current_runtime", lambda: object())
    monkeypatch.setattr(turns, "start_chat", start_chat)
    monkeypatch.setattr(cs, "load_sessions", load_sessions)
    return fake


def handler(name: str) -> str:
    return format_event_handler(cs.ChatState.event_handlers[name])


def chat_vars(deltas: list[StateDelta]) -> list[dict[str, Any]]:
    """The ChatState part of each delta, with the ``_rx_state_`` suffix removed."""
    out = []
    for delta in deltas:
        for key, values in delta.items():
            if key.endswith("chat_state"):
                out.append({name.removesuffix("_rx_state_"): value for name, value in values.items()})
    return out


class Client:
    """One browser tab: a token and the deltas its events produced."""

    def __init__(self, processor: BaseStateEventProcessor) -> None:
        self.processor = processor
        self.token = uuid.uuid4().hex

    async def fire(self, name: str, **payload: Any) -> list[dict[str, Any]]:
        event = Event(name=handler(name), payload=payload)
        deltas = [d async for d in self.processor.enqueue_stream_delta(self.token, event)]
        return chat_vars(deltas)

    async def state(self) -> cs.ChatState:
        manager = self.processor._root_context.state_manager  # type: ignore[union-attr]  # configured below
        root = await manager.get_state(BaseStateToken(ident=self.token, cls=State))
        return await root.get_state(cs.ChatState)


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    processor = BaseStateEventProcessor().configure(state_manager=StateManagerMemory())
    async with processor:
        tab = Client(processor)
        await tab.fire("save_user_name", form_data={"user_name": "Ann"})
        await tab.fire("relocalise", lang="en")  # these tests read English; test_chat_lang covers Chinese
        yield tab


async def test_send_streams_into_live_vars_and_commits_the_answer_once(
    client: Client, pipeline: SimpleNamespace
) -> None:
    pipeline.events = [
        ev.Thinking(message="正在思考…", cn_agent="助手"),
        call("c1", "(12+8)*3"),
        result("c1", "60"),
        *tokens(60),
        ev.Citations(items=[ev.Citation(title="Fan laws", url="/kb/fan-laws")]),
        ev.Done(duration_ms=1200, usage=USAGE),
    ]
    pipeline.pause_s = 0.005

    deltas = await client.fire("send", form_data={"message": "  please calculate (12+8)*3 "})

    assert pipeline.requests[0].message == "please calculate (12+8)*3"
    assert pipeline.requests[0].user_name == "Ann" and pipeline.requests[0].session_id is None
    # The transcript goes out twice: the user's bubble, then the finished answer. Never per token.
    assert [i for i, d in enumerate(deltas) if "messages" in d] == [0, len(deltas) - 1]
    text_flushes = [d["live_text"] for d in deltas[1:-1] if d.get("live_text")]
    assert 2 <= len(text_flushes) <= 15
    assert any(d.get("live_tools") for d in deltas[1:-1])

    state = await client.state()
    assert state.is_streaming is False and state.session_id == SESSION
    assert (state.live_text, state.live_tools, state.live_status) == ("", [], "")
    user, answer = state.messages
    assert (user.role, user.content) == ("user", "please calculate (12+8)*3")
    assert answer.content == "".join(f"w{i} " for i in range(60))
    assert [(t.tool_call_id, t.content) for t in answer.tools] == [("c1", "60")]
    assert answer.citations[0].url == "/kb/fan-laws"
    assert answer.status == "done" and answer.footer.startswith("1.2 sec")
    assert [s.id for s in state.sessions] == [SESSION]
    assert pipeline.runs[0].released


async def test_follow_up_continues_the_same_session(client: Client, pipeline: SimpleNamespace) -> None:
    pipeline.events = [ev.Token(content="hi"), ev.Done(duration_ms=1, usage=USAGE)]
    await client.fire("send", form_data={"message": "first"})
    await client.fire("send", form_data={"message": "second"})

    assert [r.session_id for r in pipeline.requests] == [None, SESSION]
    assert len((await client.state()).messages) == 4

    await client.fire("new_chat")
    await client.fire("send", form_data={"message": "third"})
    assert pipeline.requests[-1].session_id is None


async def test_rejected_run_shows_the_message_in_the_bubble(
    client: Client, pipeline: SimpleNamespace
) -> None:
    pipeline.reject = ChatRejected(409, "busy", "This session is already answering. Wait for it to finish.")

    await client.fire("send", form_data={"message": "hello"})

    state = await client.state()
    answer = state.messages[-1]
    assert answer.status == "error"
    assert answer.error == "This conversation or the server is busy answering. Try again in a moment."
    assert answer.error_detail == "This session is already answering. Wait for it to finish."
    assert state.is_streaming is False


async def test_pipeline_error_event_is_shown_in_place(client: Client, pipeline: SimpleNamespace) -> None:
    pipeline.events = [ev.Error(message="No model is configured.", code="model_unconfigured")]

    await client.fire("send", form_data={"message": "hello"})

    answer = (await client.state()).messages[-1]
    assert (answer.status, answer.error) == ("error", "No model is configured yet, so nobody can answer.")
    assert answer.error_detail == "No model is configured.", "the operator's sentence stays behind Details"


async def test_blank_message_and_missing_name_do_not_start_a_run(pipeline: SimpleNamespace) -> None:
    processor = BaseStateEventProcessor().configure(state_manager=StateManagerMemory())
    async with processor:
        tab = Client(processor)
        await tab.fire("send", form_data={"message": "hello"})
        state = await tab.state()
        assert state.name_dialog_open is True and state.messages == []

        await tab.fire("save_user_name", form_data={"user_name": "Ann"})
        await tab.fire("send", form_data={"message": "   "})
        assert (await tab.state()).messages == []
    assert pipeline.requests == []


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
