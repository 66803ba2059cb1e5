"""The kernel's channel roles, fed with hand-made graph stream items (offline, no model)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage

from ventapp.agent import events as ev
from ventapp.agent.kernel import Kernel


async def _stream(items: list[tuple[tuple[str, ...], str, Any]]) -> AsyncIterator[Any]:
    for item in items:
        yield item


async def _run(items: list[tuple[tuple[str, ...], str, Any]]) -> tuple[Kernel, list[ev._Event]]:
    kernel = Kernel(context_limit=1000)
    out = [event async for event in kernel.run(_stream(items))]
    return kernel, out


def _call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


async def test_only_ai_message_chunks_become_tokens() -> None:
    """Pitfall 5: a ToolMessage on the messages channel must not reach the answer."""
    items = [
        ((), "messages", (AIMessageChunk(content="Hello "), {})),
        ((), "messages", (ToolMessage(content='{"data": 1}', tool_call_id="c1"), {})),
        ((), "messages", (AIMessageChunk(content="world"), {})),
    ]
    kernel, out = await _run(items)
    assert [event.content for event in out if isinstance(event, ev.Token)] == ["Hello ", "world"]
    assert kernel.transcript.answer == "Hello world"


async def test_summarisation_and_subagent_text_stay_out_of_the_answer() -> None:
    items = [
        ((), "messages", (AIMessageChunk(content="summary text"), {"lc_source": "summarization"})),
        ((), "messages", (AIMessageChunk(content="hidden"), {"tags": ["nostream"]})),
        (("tools:abc",), "messages", (AIMessageChunk(content="sub-agent words"), {})),
        ((), "messages", (AIMessageChunk(content="answer"), {})),
    ]
    _, out = await _run(items)
    assert [event.content for event in out if isinstance(event, ev.Token)] == ["answer"]


async def test_results_attach_by_tool_call_id_not_by_name() -> None:
    """Pitfall 12: the same tool twice in one step; results arrive in reverse order."""
    ai = AIMessage(
        content="",
        tool_calls=[_call("calculate", "c1", expression="1+1"), _call("calculate", "c2", expression="2+2")],
    )
    items = [
        ((), "updates", {"model": {"messages": [ai]}}),
        (
            (),
            "updates",
            {"tools": {"messages": [ToolMessage(content="4", tool_call_id="c2", name="calculate")]}},
        ),
        (
            (),
            "updates",
            {"tools": {"messages": [ToolMessage(content="2", tool_call_id="c1", name="calculate")]}},
        ),
    ]
    kernel, out = await _run(items)
    results = {event.tool_call_id: event.content for event in out if isinstance(event, ev.ToolResult)}
    assert results == {"c1": "2", "c2": "4"}
    assert kernel.transcript.tool_cards["c1"].args == {"expression": "1+1"}
    assert kernel.transcript.tool_cards["c2"].content == "4"
    executing = next(event for event in out if isinstance(event, ev.Executing))
    assert executing.tools == ["calculate", "calculate"]
    # Tester: "正在调用 计算器" — Chinese puts no space between the verb and the label; and
    # try14: two parallel calls of one tool read "正在调用计算器、计算器".
    assert executing.message == "正在调用" + executing.cn_tools[0] and len(executing.cn_tools) == 2


async def test_tool_error_status_sets_error_flag() -> None:
    ai = AIMessage(content="", tool_calls=[_call("calculate", "c1", expression="1/0")])
    failed = ToolMessage(content="calculate failed: division by zero", tool_call_id="c1", status="error")
    _, out = await _run(
        [((), "updates", {"model": {"messages": [ai]}}), ((), "updates", {"tools": {"messages": [failed]}})]
    )
    result = next(event for event in out if isinstance(event, ev.ToolResult))
    assert result.error is True


async def test_citations_come_from_tool_results_deduplicated() -> None:
    """Invariant 4: sources are read from the ToolMessage, de-duplicated by URL."""
    sources = [{"title": "Fan laws", "url": "/kb/fan-laws", "snippet": "Q∝N"}]
    payload = json.dumps({"data": [], "sources": sources})
    ai = AIMessage(
        content="",
        tool_calls=[_call("knowledge_search", "k1", query="a"), _call("knowledge_search", "k2", query="b")],
    )
    items = [
        ((), "updates", {"model": {"messages": [ai]}}),
        ((), "updates", {"tools": {"messages": [ToolMessage(content=payload, tool_call_id="k1")]}}),
        ((), "updates", {"tools": {"messages": [ToolMessage(content=payload, tool_call_id="k2")]}}),
    ]
    kernel, out = await _run(items)
    citations = [event for event in out if isinstance(event, ev.Citations)]
    assert len(citations) == 1, "the second, identical source adds nothing new"
    assert [item.url for item in kernel.transcript.sources.items] == ["/kb/fan-laws"]


async def test_usage_prefers_provider_and_context_is_main_thread_only() -> None:
    main_call = AIMessage(
        content="a", id="m1", usage_metadata={"input_tokens": 100, "output_tokens": 5, "total_tokens": 105}
    )
    sub_call = AIMessage(
        content="b", id="s1", usage_metadata={"input_tokens": 900, "output_tokens": 7, "total_tokens": 907}
    )
    kernel, _ = await _run(
        [
            ((), "updates", {"model": {"messages": [main_call]}}),
            (("tools:x",), "updates", {"model": {"messages": [sub_call]}}),
        ]
    )
    usage = kernel.transcript.meter.usage()
    assert usage.input_tokens == 1000 and usage.output_tokens == 12
    assert usage.context_tokens == 100, "a sub-agent call never moves the main context occupancy"
    assert usage.usage_source == "provider"


async def test_missing_usage_is_marked_estimate() -> None:
    kernel, _ = await _run(
        [((), "updates", {"model": {"messages": [AIMessage(content="no usage here", id="m1")]}})]
    )
    usage = kernel.transcript.meter.usage()
    assert usage.usage_source == "estimate" and usage.output_tokens > 0


async def test_todos_and_interrupt_become_events() -> None:
    class _Interrupt:
        id = "int-1"
        value = {
            "action_requests": [{"name": "calculate", "args": {"expression": "1"}, "description": "ok?"}]
        }

    todos = [{"content": "size the fan", "status": "in_progress"}]
    _, out = await _run(
        [((), "updates", {"tools": {"todos": todos}}), ((), "updates", {"__interrupt__": (_Interrupt(),)})]
    )
    assert isinstance(out[0], ev.UpdatedTodoList) and out[0].todos == todos
    interrupt = out[1]
    assert isinstance(interrupt, ev.Interrupt) and interrupt.interrupt_token == "int-1"
    assert interrupt.tool_approval is not None and interrupt.tool_approval["tool"] == "calculate"


async def test_task_call_tracks_subagent_by_id() -> None:
    ai = AIMessage(
        content="", tool_calls=[_call("task", "t1", subagent_type="researcher", description="look up")]
    )
    items = [
        ((), "updates", {"model": {"messages": [ai]}}),
        (
            ("tools:ns1",),
            "updates",
            {
                "model": {
                    "messages": [
                        AIMessage(content="", tool_calls=[_call("knowledge_search", "k9", query="q")])
                    ]
                }
            },
        ),
        ((), "updates", {"tools": {"messages": [ToolMessage(content="found", tool_call_id="t1")]}}),
    ]
    _, out = await _run(items)
    start = next(event for event in out if isinstance(event, ev.AgentStart))
    assert start.agent == "researcher" and start.agent_id == "t1"
    inner = next(
        event for event in out if isinstance(event, ev.ToolCall) and event.tool == "knowledge_search"
    )
    assert inner.agent_id == "t1"
    done = next(event for event in out if isinstance(event, ev.AgentDone))
    assert done.agent_id == "t1"


def test_context_overflow_is_a_readable_failure() -> None:
    from langchain_core.exceptions import ContextOverflowError

    from ventapp.agent.errors import classify

    failure = classify(ContextOverflowError("Context remains above the input budget after compaction"))
    assert failure.code == "context_overflow" and "CONTEXT_LIMIT" in failure.message


async def test_messages_re_sent_by_middleware_are_neither_billed_nor_announced_again() -> None:
    """Only the model node makes a model call; the approval node and the tool-call patcher repeat
    messages (a resumed sub-agent's paused call, a whole history) and must not count twice."""
    call = AIMessage(
        content="",
        id="m1",
        tool_calls=[_call("calculate", "c1", expression="1+1")],
        usage_metadata={"input_tokens": 50, "output_tokens": 5, "total_tokens": 55},
    )
    old_turn = AIMessage(
        content="earlier",
        id="m0",
        usage_metadata={"input_tokens": 30, "output_tokens": 3, "total_tokens": 33},
    )
    kernel, out = await _run(
        [
            ((), "updates", {"model": {"messages": [call]}}),
            ((), "updates", {"HumanInTheLoopMiddleware.after_model": {"messages": [call]}}),
            ((), "updates", {"PatchToolCallsMiddleware.before_agent": {"messages": [old_turn, call]}}),
        ]
    )
    usage = kernel.transcript.meter.usage()
    assert (usage.model_calls, usage.input_tokens, usage.output_tokens) == (1, 50, 5)
    assert [event.tool_call_id for event in out if isinstance(event, ev.ToolCall)] == ["c1"]
    assert list(kernel.transcript.tool_cards) == ["c1"]


async def test_resumed_kernel_keeps_sub_agent_cards_with_their_agent() -> None:
    """A run resumed after an approval inside a sub-agent: the saved cards say whose call it was."""
    prior = [
        {
            "tool_call_id": "t1",
            "tool": "task",
            "cn_tool": "子智能体",
            "args": {"subagent_type": "researcher"},
        },
        {
            "tool_call_id": "k1",
            "tool": "knowledge_search",
            "cn_tool": "知识库",
            "args": {"query": "a"},
            "agent_id": "t1",
        },
    ]
    kernel = Kernel(context_limit=1000, prior_cards=prior, edited_args={"k1": {"query": "b"}})
    paused = AIMessage(content="", id="s1", tool_calls=[_call("knowledge_search", "k1", query="a")])
    items = [
        (("tools:ns1",), "updates", {"HumanInTheLoopMiddleware.after_model": {"messages": [paused]}}),
        (
            ("tools:ns1",),
            "updates",
            {"tools": {"messages": [ToolMessage(content="found", tool_call_id="k1")]}},
        ),
        ((), "updates", {"tools": {"messages": [ToolMessage(content="summary", tool_call_id="t1")]}}),
    ]
    out = [event async for event in kernel.run(_stream(items))]

    edited = [event for event in out if isinstance(event, ev.ToolCall)]
    assert [(e.tool_call_id, e.args, e.agent_id) for e in edited] == [("k1", {"query": "b"}, "t1")]
    result = next(event for event in out if isinstance(event, ev.ToolResult) and event.tool_call_id == "k1")
    assert result.agent_id == "t1"
    assert any(isinstance(event, ev.AgentDone) and event.agent_id == "t1" for event in out)
    assert kernel.transcript.meter.usage().model_calls == 0


async def test_a_long_call_cut_mid_stream_is_billed_with_everything_it_streamed() -> None:
    """The open call's chunks are merged in batches (issue 18), and a cut bills all of them."""
    from langchain_core.messages.utils import count_tokens_approximately

    from ventapp.agent.kernel import OPEN_CALL_BATCH

    words = [f"word{index} " for index in range(2 * OPEN_CALL_BATCH + 7)]
    items = [((), "messages", (AIMessageChunk(content=word, id="run-1"), {})) for word in words]
    kernel, out = await _run(items)
    assert kernel.transcript.answer == "".join(words) == "".join(event.content for event in out)
    kernel.settle_cut_call(input_estimate=321)
    (call,) = kernel.transcript.meter.calls
    assert call.source == "estimate" and call.input_tokens == 321
    assert call.output_tokens == count_tokens_approximately([AIMessage(content="".join(words))])


async def test_the_tool_call_patchers_history_is_no_result_of_this_run() -> None:
    """A call left unanswered (an approval dropped by a new message) gets a synthetic error result
    from deepagents' patcher when the next turn starts, in an update re-sending the whole history:
    neither it nor an older real result is a card of the new answer (tester's item 6)."""
    old = AIMessage(content="", tool_calls=[_call("calculate", "c0", expression="1+1")])
    dropped = AIMessage(content="", tool_calls=[_call("calculate", "c1", expression="(12+8)*3")])
    patched = ToolMessage(
        content="Tool call calculate with id c1 did not complete - no result was recorded.",
        tool_call_id="c1",
        name="calculate",
        status="error",
    )
    history = [old, ToolMessage(content="2", tool_call_id="c0", name="calculate"), dropped, patched]
    items = [
        ((), "updates", {"PatchToolCallsMiddleware.before_agent": {"messages": history}}),
        ((), "messages", (AIMessageChunk(content="Hello"), {})),
        ((), "updates", {"model": {"messages": [AIMessage(content="Hello")]}}),
    ]
    kernel, out = await _run(items)
    assert [type(event) for event in out if isinstance(event, ev.ToolResult | ev.ToolCall)] == []
    assert kernel.transcript.tool_cards == {} and kernel.transcript.answer == "Hello"


def test_every_tool_the_model_is_offered_has_a_name_in_both_languages(tmp_path: Path) -> None:
    """Tester: deepagents' ``delete`` showed as ``delete`` among the Chinese tool names."""
    from ventapp.agent.agent_factory import build_agent
    from ventapp.agent.kernel import label_for
    from ventapp.agent.model_factory import build_model
    from ventapp.config import load_settings

    settings = load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    graph = build_agent(build_model(settings), None, workspaces_dir=tmp_path)
    tools = sorted(graph.nodes["tools"].bound.tools_by_name)
    assert "delete" in tools
    unnamed = [tool for tool in tools if label_for(tool, "zh-CN") == tool or label_for(tool, "en") == tool]
    assert unnamed == []


def _thought(text: str, content: str = "") -> tuple[tuple[str, ...], str, Any]:
    chunk = AIMessageChunk(content=content, additional_kwargs={"reasoning_content": text})
    return ((), "messages", (chunk, {}))


async def test_the_transcript_keeps_the_reasoning_as_the_live_answer_shows_it() -> None:
    """A paragraph per model call, the same as the browser's fold of the very events (stored with the answer)."""
    from ventapp.state.live_answer import LiveAnswer, reduce_event

    ai = AIMessage(content="", tool_calls=[_call("calculate", "c1", expression="12*8")])
    items = [
        _thought("Multiply "),
        _thought("first."),
        ((), "updates", {"model": {"messages": [ai]}}),
        (
            (),
            "updates",
            {"tools": {"messages": [ToolMessage(content="96", tool_call_id="c1", name="calculate")]}},
        ),
        _thought("It is 96.", "The answer "),
        _thought(" Say so.", "is 96."),  # answer text came between: the UI shows a new paragraph too
        (
            ("tools:abc",),
            "messages",
            (AIMessageChunk(content="", additional_kwargs={"reasoning_content": "sub"}), {}),
        ),
    ]
    kernel, out = await _run(items)
    live = LiveAnswer()
    for event in out:
        live = reduce_event(live, event)

    assert kernel.transcript.reasoning.text == "Multiply first.\n\nIt is 96.\n\n Say so."
    assert kernel.transcript.reasoning.text == live.reasoning
    assert kernel.transcript.reasoning.chars == len(live.reasoning)
