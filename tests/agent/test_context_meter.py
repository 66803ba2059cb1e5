"""A call without provider usage books the size of the request it sent, never 0 (issue 17 item 7)."""

from __future__ import annotations

from uuid import uuid4

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, LLMResult

from ventapp.agent.context_meter import ContextMeter, InternalCallMeter

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calculate",
            "description": "Evaluate an arithmetic expression exactly. " * 20,
            "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
        },
    }
]
PROMPT = [SystemMessage(content="You are VentAgent. " * 50), HumanMessage(content="please calculate 1+1")]


def _call(meter: ContextMeter, answer: AIMessage, *, tags: list[str] | None = None) -> None:
    callbacks, run_id = InternalCallMeter(meter), uuid4()
    callbacks.on_chat_model_start({}, [PROMPT], run_id=run_id, tags=tags, invocation_params={"tools": TOOLS})
    callbacks.on_llm_end(LLMResult(generations=[[ChatGeneration(message=answer)]]), run_id=run_id, tags=tags)


def test_call_without_usage_books_messages_and_tool_schemas() -> None:
    meter = ContextMeter(context_limit=8192)
    answer = AIMessage(content="2", id="run-1")
    _call(meter, answer)
    meter.observe(answer, main_thread=True)

    expected = count_tokens_approximately(PROMPT, tools=TOOLS)
    assert expected > count_tokens_approximately(PROMPT), "the tool schemas are counted"
    usage = meter.usage()
    assert usage.input_tokens == expected and usage.context_tokens == expected
    assert usage.usage_source == "estimate" and meter.calls[0].source == "estimate"
    assert meter.calls[0].input_tokens == expected


def test_provider_usage_still_wins() -> None:
    meter = ContextMeter(context_limit=8192)
    answer = AIMessage(
        content="2", id="run-2", usage_metadata={"input_tokens": 700, "output_tokens": 3, "total_tokens": 703}
    )
    _call(meter, answer)
    meter.observe(answer, main_thread=True)
    assert meter.usage().input_tokens == 700 and meter.usage().usage_source == "provider"


def test_internal_call_without_usage_is_estimated_too() -> None:
    meter = ContextMeter(context_limit=8192)
    _call(meter, AIMessage(content="summary", id="run-3"), tags=["nostream"])
    assert meter.calls[0].input_tokens == count_tokens_approximately(PROMPT, tools=TOOLS)
    assert meter.context_tokens == 0, "internal calls never move the context gauge"


def test_cut_call_estimate_includes_the_tool_schemas() -> None:
    meter = ContextMeter(context_limit=8192)
    InternalCallMeter(meter).on_chat_model_start(
        {}, [PROMPT], run_id=uuid4(), invocation_params={"tools": TOOLS}
    )
    assert meter.prompt_estimate == count_tokens_approximately(PROMPT, tools=TOOLS)


class _CountedMessages(list):  # type: ignore[type-arg]
    """A request's message list that counts how often it is read (sizing it reads it)."""

    reads = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        type(self).reads += 1
        return super().__iter__()


def test_a_call_with_provider_usage_never_sizes_its_request() -> None:
    """Issue 18: sizing every request as it started put pure CPU before each call's first byte."""
    meter = ContextMeter(context_limit=8000)
    callbacks, run_id = InternalCallMeter(meter), uuid4()
    messages = _CountedMessages(PROMPT)
    callbacks.on_chat_model_start({}, [messages], run_id=run_id, invocation_params={"tools": TOOLS})
    reply = AIMessage(
        content="hi", id="m1", usage_metadata={"input_tokens": 7, "output_tokens": 2, "total_tokens": 9}
    )
    callbacks.on_llm_end(LLMResult(generations=[[ChatGeneration(message=reply)]]), run_id=run_id)
    meter.observe(reply, main_thread=True)
    assert _CountedMessages.reads == 0
    assert meter.calls[0].input_tokens == 7
    # Asked for later (a cut call), the same request is sized then, with its tool schemas.
    assert meter.prompt_estimate == count_tokens_approximately(PROMPT, tools=TOOLS)


def test_a_cut_call_counts_its_input_once() -> None:
    meter = ContextMeter(context_limit=8192)
    InternalCallMeter(meter).on_chat_model_start(
        {}, [PROMPT], run_id=uuid4(), invocation_params={"tools": TOOLS}
    )
    size = meter.prompt_estimate
    meter.observe_cut_call(AIMessage(content="The fan law says", id="cut-1"), size)
    usage = meter.usage()
    assert meter.calls[0].input_tokens == size > 0
    assert (usage.input_tokens, usage.context_tokens, usage.model_calls) == (size, size, 1)
    assert usage.usage_source == "estimate"


def test_a_calls_request_is_kept_until_it_ends_not_when_it_errors() -> None:
    """A stop cancels the call (an error to the callbacks): its request must still size the cut call."""
    meter = ContextMeter(context_limit=8192)
    callbacks, cut, ended = InternalCallMeter(meter), uuid4(), uuid4()
    for run_id, ns in ((cut, "tools:a|model:1"), (ended, "tools:b|model:2")):
        callbacks.on_chat_model_start({}, [PROMPT], run_id=run_id, metadata={"langgraph_checkpoint_ns": ns})
    callbacks.on_llm_error(RuntimeError("cancelled"), run_id=cut)
    reply = AIMessage(content="ok", id="m2")
    callbacks.on_llm_end(LLMResult(generations=[[ChatGeneration(message=reply)]]), run_id=ended)
    assert meter.open_request_estimate("tools:a|model:1") == count_tokens_approximately(PROMPT)
    assert meter.open_request_estimate("tools:b|model:2") == 0, "a finished call's request is let go"
