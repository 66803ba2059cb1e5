"""A run stopped mid model call bills the cut call, a sub-agent's too (offline, hand-made streams)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from uuid import uuid4

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

from ventapp.agent import events as ev
from ventapp.agent.context_meter import InternalCallMeter
from ventapp.agent.kernel import OPEN_CALL_BATCH, Kernel

SUB = ("tools:task-1",)
SUB_NS = "tools:task-1|model:step-2"
"""The sub-agent's model task, as langgraph names it in the chunks' metadata and the callbacks'."""
USAGE = {"input_tokens": 900, "output_tokens": 12, "total_tokens": 912}


async def _stream(items: list[tuple[tuple[str, ...], str, Any]]) -> AsyncIterator[Any]:
    for item in items:
        yield item


def _main_call() -> list[tuple[tuple[str, ...], str, Any]]:
    task = {"name": "task", "args": {"subagent_type": "researcher"}, "id": "t1", "type": "tool_call"}
    return [
        ((), "messages", (AIMessageChunk(content="Let me ask the researcher.", id="main-1"), {})),
        (
            (),
            "updates",
            {
                "model": {
                    "messages": [AIMessage(content="", id="main-1", tool_calls=[task], usage_metadata=USAGE)]
                }
            },
        ),
    ]


def _sub_chunks(words: list[str], **extra: Any) -> list[tuple[tuple[str, ...], str, Any]]:
    meta = {"langgraph_checkpoint_ns": SUB_NS, "langgraph_node": "model"}
    return [(SUB, "messages", (AIMessageChunk(content=word, **extra), meta)) for word in words]


async def _kernel(items: list[tuple[tuple[str, ...], str, Any]]) -> tuple[Kernel, list[Any]]:
    kernel = Kernel(context_limit=8192)
    out = [event async for event in kernel.run(_stream(items))]
    return kernel, out


async def test_a_sub_agent_call_cut_mid_stream_is_billed_off_the_main_thread() -> None:
    words = [f"airflow{index} " for index in range(2 * OPEN_CALL_BATCH + 7)]
    kernel, out = await _kernel(_main_call() + _sub_chunks(words))
    meter = kernel.transcript.meter
    assert not any(isinstance(event, ev.Token) and "airflow" in event.content for event in out)
    assert "airflow" not in kernel.transcript.answer, "sub-agent text stays out of the answer"
    before = (len(meter.calls), meter.context_tokens, meter.usage().model_calls)
    assert before == (1, 900, 1)

    kernel.settle_cut_call(input_estimate=321)

    assert len(meter.calls) == 2, "the cut sub-agent call is billed"
    cut = meter.calls[-1]
    assert cut.source == "estimate" and cut.main_thread is False
    assert cut.input_tokens == 321, "no request known: the turn's estimate"
    assert cut.output_tokens == count_tokens_approximately([AIMessage(content="".join(words))]) > 0
    usage = meter.usage()
    assert usage.context_tokens == 900, "a sub-agent's call never moves the context occupancy"
    assert (usage.model_calls, usage.usage_source) == (2, "estimate")
    assert (usage.input_tokens, usage.output_tokens) == (900 + 321, 12 + cut.output_tokens)
    kernel.settle_cut_call(input_estimate=321)
    assert len(meter.calls) == 2, "settling again bills nothing more"


async def test_a_cut_sub_agent_call_books_the_request_it_sent() -> None:
    """The metering callback saw the sub-agent's request start; the stop cancelled it (an error)."""
    kernel = Kernel(context_limit=8192)
    meter = kernel.transcript.meter
    request = [
        SystemMessage(content="You are the researcher. " * 80),
        HumanMessage(content="velocity limits"),
    ]
    callbacks, run_id = InternalCallMeter(meter), uuid4()
    callbacks.on_chat_model_start({}, [request], run_id=run_id, metadata={"langgraph_checkpoint_ns": SUB_NS})
    _ = [event async for event in kernel.run(_stream(_sub_chunks(["The limit ", "is 4 m/s"])))]
    callbacks.on_llm_error(RuntimeError("cancelled"), run_id=run_id)

    kernel.settle_cut_call(input_estimate=5)

    (cut,) = meter.calls
    assert cut.input_tokens == count_tokens_approximately(request) > 5
    assert (cut.main_thread, meter.context_tokens, meter.input_tokens) == (False, 0, cut.input_tokens)


async def test_a_sub_agent_call_that_finished_is_not_billed_again() -> None:
    """One sub-agent's call finished, a second one's (another task) was cut: one more call, not two."""
    other = ("tools:task-2",)
    finished = AIMessage(content="The limit is 4 m/s", id="sub-1")
    items = [
        *_main_call(),
        *_sub_chunks(["The limit ", "is 4 m/s"]),  # the chunks carry no id: only the kernel can tell
        (SUB, "updates", {"model": {"messages": [finished]}}),
        (other, "messages", (AIMessageChunk(content="Checking the"), {"langgraph_checkpoint_ns": "x"})),
    ]
    kernel, _ = await _kernel(items)
    meter = kernel.transcript.meter
    assert [call.call_key for call in meter.calls] == ["main-1", "sub-1"]

    kernel.settle_cut_call(input_estimate=50)

    assert len(meter.calls) == 3, "only the cut call is added"
    assert meter.calls[-1].output_tokens == count_tokens_approximately([AIMessage(content="Checking the")])
    assert meter.usage().model_calls == 3


async def test_a_cut_sub_agent_call_with_provider_usage_books_that() -> None:
    usage = {"input_tokens": 640, "output_tokens": 9, "total_tokens": 649}
    items = [
        *_main_call(),
        *_sub_chunks(["a"]),
        (SUB, "messages", (AIMessageChunk(content="", usage_metadata=usage), {})),
    ]
    kernel, _ = await _kernel(items)
    kernel.settle_cut_call(input_estimate=5)
    cut = kernel.transcript.meter.calls[-1]
    assert (cut.input_tokens, cut.output_tokens, cut.source, cut.main_thread) == (640, 9, "provider", False)
    assert kernel.transcript.meter.context_tokens == 900


async def test_two_sub_agents_cut_at_once_are_two_calls() -> None:
    """Parallel ``task`` calls stream under their own namespaces; chunks without an id still count apart."""
    items = [
        *_main_call(),
        (("tools:task-1",), "messages", (AIMessageChunk(content="first sub-agent"), {})),
        (("tools:task-2",), "messages", (AIMessageChunk(content="second sub-agent"), {})),
        (("tools:task-1",), "messages", (AIMessageChunk(content=" goes on"), {})),
    ]
    kernel, _ = await _kernel(items)
    kernel.settle_cut_call(input_estimate=7)
    meter = kernel.transcript.meter
    assert [(call.main_thread, call.input_tokens) for call in meter.calls[1:]] == [(False, 7), (False, 7)]
    assert meter.calls[1].output_tokens == count_tokens_approximately(
        [AIMessage(content="first sub-agent goes on")]
    )
    assert len({call.call_key for call in meter.calls}) == 3 and meter.usage().model_calls == 3
