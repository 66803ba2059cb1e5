"""A run stopped while its tool calls ran: the calls that finished reach the next turn's model."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import open_runtime as _runtime
from ventapp.agent import chat_run
from ventapp.agent import events as ev
from ventapp.agent.errors import CANCELLED, TIMED_OUT, RunFailure
from ventapp.agent.kernel import ToolCard
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.stopped_tools import missing_results
from ventapp.db import chat_store
from ventapp.tools import registry

_RELEASE = threading.Event()


def slow_probe(label: str) -> str:
    """Wait until the test lets go (a tool still running when the run is stopped).

    Args:
        label: Any text; echoed back.
    """
    _RELEASE.wait(10)
    return f"probed {label}"


@pytest.fixture
def slow_tool() -> Iterator[None]:
    _RELEASE.clear()
    registry.register(group="测试", label="慢探针", summary="Waits.")(slow_probe)
    try:
        yield
    finally:
        _RELEASE.set()  # the worker thread still waiting ends now, not after 10 s
        registry.remove_specs(__name__)


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedServer]:
    with ScriptedServer(delay_ms=5) as server:
        yield server


def _tool_messages(request: dict[str, Any]) -> dict[str, str]:
    """``tool_call_id -> content`` of the request's ``tool`` messages."""
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m.get("role") == "tool"}


@pytest.mark.parametrize(("stop", "code"), [(CANCELLED, "cancelled"), (TIMED_OUT, "timeout")])
async def test_a_call_that_finished_before_the_stop_reaches_the_next_turn_with_its_result(
    tmp_path: Path, llm: ScriptedServer, slow_tool: None, stop: RunFailure, code: str
) -> None:
    """The finished call was reported to the model as "did not complete" and could be run again."""
    fast = {"name": "calculate", "arguments": {"expression": "2+2"}, "id": "call_fast"}
    slow = {"name": "slow_probe", "arguments": {"label": "x"}, "id": "call_slow"}
    llm.push({"tool_calls": [fast, slow]}, {"content": "next turn"})
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="calculate and probe", user_name="u"))
        events = run.events()
        async for event in events:
            if event.type == "tool_result":
                assert event.tool_call_id == "call_fast"
                assert run.request_stop(stop)
                break
        closing = [event async for event in events][-1]
        assert isinstance(closing, ev.Error) and closing.code == code
        history = [
            s
            async for s in run.agent.graph.aget_state_history({"configurable": {"thread_id": run.session_id}})
        ]
        added = history[0].metadata
        assert (added["source"], added["run_id"]) == ("update", run.run_id), (
            "the stopped run's own checkpoint"
        )
        fast_result = run.kernel.transcript.tool_cards["call_fast"].content
        assert fast_result and "4" in fast_result

        second = await start_chat(
            runtime, ChatRequest(message="go on", user_name="u", session_id=run.session_id)
        )
        assert [event.type async for event in second.events()][-1] == "done"
        results = _tool_messages(llm.requests()[-1])
        assert results["call_fast"] == fast_result, "the finished call's real result"
        assert list(results) == ["call_fast", "call_slow"], "results in the order of the calls (try16)"
        assert "did not complete" in results["call_slow"] or "cancelled" in results["call_slow"]
    finally:
        await runtime.close()


async def test_a_successful_run_writes_nothing_more_into_the_thread(
    tmp_path: Path, llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    called: list[str] = []

    async def spy(*args: Any, **kwargs: Any) -> int:
        called.append("x")
        return 0

    monkeypatch.setattr(chat_run, "record_cut_turn", spy)
    llm.push({"tool_calls": [{"name": "calculate", "arguments": {"expression": "2+2"}}]}, {"content": "4"})
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="calculate", user_name="u"))
        assert [event.type async for event in run.events()][-1] == "done"
        assert called == []
    finally:
        await runtime.close()


def test_only_the_main_agents_finished_calls_missing_from_the_checkpoint_are_added() -> None:
    """Raw pending results win over the card's text; unfinished, sub-agent and kept calls are left."""
    calls = [{"name": "calculate", "args": {}, "id": i, "type": "tool_call"} for i in "abcde"]
    raw = ToolMessage(content=[{"type": "text", "text": "raw b"}], tool_call_id="b", name="calculate")
    kept = ToolMessage(content="kept", tool_call_id="e", name="calculate")
    snapshot = SimpleNamespace(
        values={"messages": [HumanMessage("hi"), AIMessage("", tool_calls=calls), kept, raw]},
        tasks=[SimpleNamespace(result={"messages": [raw]}), SimpleNamespace(result=None)],
    )
    cards = {i: ToolCard(i, "calculate", "计算", {}, content=f"card {i}") for i in "abe"}
    cards["a"].error = True
    cards["c"] = ToolCard("c", "calculate", "计算", {}, agent_id="call_task", content="sub")
    cards["d"] = ToolCard("d", "calculate", "计算", {})  # still running when stopped
    out = missing_results(snapshot, cards)
    assert [m.tool_call_id for m in out] == ["a", "b"]
    assert (out[0].content, out[0].status) == ("card a", "error")
    assert out[1] is raw, "the message the model would have read, not the card's text"


async def test_a_failure_while_keeping_the_results_does_not_stop_the_save(
    tmp_path: Path, llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("checkpointer down")

    monkeypatch.setattr(chat_run, "record_cut_turn", broken)
    llm.push({"content": long_answer(150)})
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="long answer please", user_name="u"))
        events = run.events()
        async for event in events:
            if event.type == "token":
                assert run.request_stop()
                break
        closing = [event async for event in events][-1]
        assert isinstance(closing, ev.Error) and closing.code == "cancelled", "not 'storage'"
        stored = chat_store.get_run(runtime.engine, run.run_id)
        assert stored is not None and stored.status == "cancelled"
    finally:
        await runtime.close()


def _roles(request: dict[str, Any]) -> list[str]:
    return [message["role"] for message in request["messages"]]


async def test_an_answer_stopped_mid_stream_is_the_models_message_before_the_next_question(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """try15: after Stop the next request held the stopped question and "继续" as two user messages in
    a row (chat templates requiring alternating roles refuse that), and not what the person had read."""
    llm.push({"content": long_answer(200)}, {"content": "continued"})
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="long answer please", user_name="u"))
        events = run.events()
        seen = ""
        async for event in events:
            if event.type == "token":
                seen += event.content
                if len(seen) > 40:
                    assert run.request_stop()
                    break
        assert [event.type async for event in events][-1] == "error"
        session_id = run.session_id
        follow = await start_chat(runtime, ChatRequest(message="继续", user_name="u", session_id=session_id))
        assert [event.type async for event in follow.events()][-1] == "done"
        request = llm.requests()[-1]
        assert _roles(request)[-3:] == ["user", "assistant", "user"]
        streamed = request["messages"][-2]["content"]
        assert streamed.startswith(seen) and streamed.endswith("[stopped]")
    finally:
        await runtime.close()


def test_a_cut_call_leaves_the_stopped_or_the_failed_marker() -> None:
    from langchain_core.messages import AIMessageChunk

    from ventapp.agent.stopped_tools import cut_answer

    asked = SimpleNamespace(values={"messages": [HumanMessage("hi")]}, tasks=[])
    answered = SimpleNamespace(values={"messages": [HumanMessage("hi"), AIMessage("done")]}, tasks=[])
    assert cut_answer(asked, None, stopped=True) == AIMessage(content="[stopped]")
    assert cut_answer(asked, None, stopped=False) == AIMessage(content="[failed]")
    partial = cut_answer(asked, AIMessageChunk(content="half an an"), stopped=False)
    assert partial is not None and partial.content == "half an an\n\n[failed]"
    assert cut_answer(answered, AIMessageChunk(content="x"), stopped=True) is None


async def test_a_question_whose_run_failed_is_followed_by_the_failed_marker_not_the_next_question(
    tmp_path: Path,
) -> None:
    """try16: a run the model server failed (HTTP 500) left the thread ending on the question, and
    the next request held two user messages in a row — which a strict chat template refuses; try17:
    joined into one, the question the server had failed on failed the next one too."""
    with ScriptedServer(dialect="strict") as strict:
        strict.push({"error": 400, "message": "content refused"}, {"content": "now it works"})
        runtime = await _runtime(tmp_path, strict.base_url)
        try:
            failed = await start_chat(runtime, ChatRequest(message="first question", user_name="u"))
            assert [event.type async for event in failed.events()][-1] == "error"
            follow = await start_chat(
                runtime, ChatRequest(message="second question", user_name="u", session_id=failed.session_id)
            )
            assert [event.type async for event in follow.events()][-1] == "done"
            request = strict.requests()[-1]
            assert _roles(request) == ["system", "user", "assistant", "user"], _roles(request)
            assert [m["content"] for m in request["messages"][1:]] == [
                "first question",
                "[failed]",
                "second question",
            ]
            stored = chat_store.list_messages(runtime.engine, failed.session_id)
            assert [m.content for m in stored if m.role == "user"] == ["first question", "second question"]
            assert "[failed]" not in " ".join(m.content for m in stored), "the thread's marker only"
        finally:
            await runtime.close()
