"""Context metering: provider usage first, an offline estimate only when it is missing (invariant 3).

Two figures are kept apart on purpose (spec 002, "上下文计量"):

* ``input_tokens`` summed over every model call of the run — the billing figure,
  sub-agent calls included;
* ``context_tokens`` — the input of the *last main-thread* call, i.e. how full the
  context window is now. Sub-agent calls never change it.

When a call reports no ``usage_metadata`` its tokens are estimated with LangChain's
offline approximate counter (about 4 characters per token, no tokenizer download),
and the run's ``usage_source`` becomes ``estimate`` so nobody mistakes it for a
provider figure. The input estimate is the request the call actually sent — its
messages plus the tool schemas bound to it, as :class:`InternalCallMeter` sees them
when the call starts — never 0 (some servers, llama-cpp-python among them, ignore
``stream_options.include_usage``). The request is only *sized* when a figure is
needed (a call without usage, a cut call): counting every request as it starts put
~1–2 ms of pure CPU before each model call's first byte (issue 18).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import LLMResult

from ventapp.agent.events import Usage
from ventapp.billing.usage import CallUsage


@dataclass
class ContextMeter:
    """Accumulates the usage of one run, one model call at a time.

    Attributes:
        context_limit: The declared window (tokens), reported alongside occupancy.
    """

    context_limit: int
    input_tokens: int = 0
    output_tokens: int = 0
    context_tokens: int = 0
    model_calls: int = 0
    estimated_calls: int = 0
    reasoning_tokens: int = 0
    """Part of ``output_tokens`` the model spent reasoning (provider figure, else estimated)."""
    calls: list[CallUsage] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)
    _input_estimates: dict[str, int] = field(default_factory=dict)
    _latest_request: PendingRequest | None = None
    _open_requests: dict[str, PendingRequest] = field(default_factory=dict)

    @property
    def prompt_estimate(self) -> int:
        """Offline size of the latest main-thread request (system prompt, history and tool schemas).

        0 before any call started. Sized on first use, then kept.
        """
        return self._latest_request.tokens() if self._latest_request is not None else 0

    def note_request(self, request: PendingRequest) -> None:
        """Remember the latest main-thread request, to size it if a figure is ever needed."""
        self._latest_request = request

    def note_open_request(self, checkpoint_ns: str, request: PendingRequest) -> None:
        """Remember the request of the model call running under ``checkpoint_ns`` until it ends.

        ``checkpoint_ns`` is langgraph's ``langgraph_checkpoint_ns`` of the model node's task (the
        same string the ``messages`` stream's metadata carries), so a call the run cuts off — a
        sub-agent's among them — can be sized with the request it really sent.
        """
        self._open_requests[checkpoint_ns] = request

    def close_request(self, checkpoint_ns: str) -> None:
        """The call under ``checkpoint_ns`` ended with a result: its request is no longer needed."""
        self._open_requests.pop(checkpoint_ns, None)

    def open_request_estimate(self, checkpoint_ns: str) -> int:
        """Offline size (tokens) of the request still open under ``checkpoint_ns``; 0 if unknown."""
        request = self._open_requests.get(checkpoint_ns)
        return request.tokens() if request is not None else 0

    def note_input_estimate(self, message_id: str, tokens: int) -> None:
        """Remember the offline size of the request that produced ``message_id``."""
        self._input_estimates[message_id] = tokens

    def already_counted(self, message_ids: set[str]) -> None:
        """Mark messages settled by an earlier run (a resumed run re-streams the paused call)."""
        self._seen.update(message_ids)

    def observe_cut_call(self, partial: AIMessage, input_estimate: int, *, main_thread: bool = True) -> None:
        """Count a call the run cut off mid-stream (stop, disconnect, timeout).

        The provider bills what it generated even though no final message arrived. When
        the stream got as far as its usage chunk that figure is used; otherwise output is
        estimated from the streamed part and input is ``input_estimate`` (the best known
        size of the request), and the call is marked ``estimate``.

        Args:
            partial: The streamed chunks merged into one message.
            input_estimate: Input tokens to book when the provider's usage never arrived.
            main_thread: False for a sub-agent's call: it is billed but, as in :meth:`observe`,
                never moves ``context_tokens`` (the main thread's window is not its window).
        """
        if partial.usage_metadata:
            self.observe(partial, main_thread=main_thread)
            return
        estimate = AIMessage(
            content=partial.content,
            # Without an id observe() keys the call by the object's address, which the next cut
            # call's message (settled right after this one is freed) may be given again.
            id=partial.id or f"call-{self.model_calls + 1}",
            tool_calls=partial.tool_calls,
            additional_kwargs=partial.additional_kwargs,
        )
        calls = len(self.calls)
        self.observe(estimate, main_thread=main_thread)
        if len(self.calls) == calls:
            return  # already counted
        # observe() sized the input itself; the call's input is ``input_estimate``, counted once
        # so the run's totals, the answer's usage and the ledger (which books ``calls``) agree.
        last = self.calls[-1]
        self.input_tokens += input_estimate - last.input_tokens
        if main_thread and input_estimate:
            self.context_tokens = input_estimate
        self.calls[-1] = CallUsage(last.call_key, input_estimate, last.output_tokens, "estimate", main_thread)

    def observe(self, message: AIMessage, *, main_thread: bool) -> None:
        """Count one finished model call (an ``AIMessage`` from a model node update).

        Args:
            message: The call's complete message; its ``usage_metadata`` is preferred.
            main_thread: True for the main agent; only then does ``context_tokens`` move.
        """
        key = message.id or str(id(message))
        input_estimate = self._input_estimates.pop(key, 0)
        if key in self._seen:
            return
        self._seen.add(key)
        self.model_calls += 1
        usage = message.usage_metadata
        reasoning = reasoning_estimate(message)
        if usage:
            call_input, call_output = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
            details = usage.get("output_token_details") or {}
            reasoning = int(details.get("reasoning") or 0) or min(reasoning, call_output)
        else:
            self.estimated_calls += 1
            call_input = input_estimate or (self.prompt_estimate if main_thread else 0)
            # The offline counter reads content and tool calls only: reasoning is output too.
            call_output = count_tokens_approximately([message]) + reasoning
        self.reasoning_tokens += reasoning
        self.calls.append(
            CallUsage(
                call_key=message.id or f"call-{self.model_calls}",
                input_tokens=call_input,
                output_tokens=call_output,
                source="provider" if usage else "estimate",
                main_thread=main_thread,
            )
        )
        self.input_tokens += call_input
        self.output_tokens += call_output
        if main_thread and call_input:
            self.context_tokens = call_input

    def usage(self) -> Usage:
        """The run's usage so far; ``usage_source`` is ``estimate`` if any call lacked provider usage."""
        if self.model_calls == 0:
            source = "none"
        elif self.estimated_calls:
            source = "estimate"
        else:
            source = "provider"
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            total_tokens=self.input_tokens + self.output_tokens,
            context_tokens=self.context_tokens,
            context_limit=self.context_limit,
            model_calls=self.model_calls,
            usage_source=source,
            reasoning_tokens=self.reasoning_tokens,
        )


def reasoning_estimate(message: AIMessage) -> int:
    """Offline token count of a message's streamed reasoning (``reasoning_content``), 0 if none."""
    text = message.additional_kwargs.get("reasoning_content")
    return count_tokens_approximately([AIMessage(content=text)]) if isinstance(text, str) and text else 0


class PendingRequest:
    """A model request as it was sent (messages + tool schemas), sized only when asked.

    Args:
        messages: The request's messages (held by reference; they are not changed afterwards).
        tools: The OpenAI tool schemas bound to the call, or None.
    """

    __slots__ = ("_messages", "_tokens", "_tools")

    def __init__(self, messages: list[Any], tools: list[Any] | None) -> None:
        self._messages: list[Any] | None = messages
        self._tools = tools
        self._tokens = 0

    def tokens(self) -> int:
        """The offline estimate (tokens); computed once, then the request is let go."""
        if self._messages is not None:
            self._tokens = count_tokens_approximately(self._messages, tools=self._tools)
            self._messages = self._tools = None
        return self._tokens


class InternalCallMeter(BaseCallbackHandler):
    """Counts model calls that never reach the graph's streams: summarisation (compaction).

    Those calls are tagged ``nostream`` and their result is not an ``AIMessage`` in the state,
    so the kernel cannot see them; the bill must (spec 002: "摘要模型的用量计入总费用"). They are
    counted as not main-thread, so they never move the context occupancy.

    It also hands the meter every streamed call's request by the model task's
    ``langgraph_checkpoint_ns`` (:meth:`ContextMeter.note_open_request`), kept until the call ends
    with a result — not when it errors: a stop cancels the call, and the cut call (a sub-agent's
    too) is then billed with the size of the request it sent.
    """

    run_inline = True  # on the event loop's thread: the meter is not thread-safe

    def __init__(self, meter: ContextMeter) -> None:
        self.meter = meter
        self._requests: dict[UUID, PendingRequest] = {}
        self._checkpoint_ns: dict[UUID, str] = {}

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep the request being sent (messages + tool schemas): its size is the input if no usage comes back."""
        if not messages:
            return
        tools = (invocation_params or {}).get("tools")
        request = PendingRequest(messages[0], tools if isinstance(tools, list) else None)
        self._requests[run_id] = request
        if "nostream" not in (tags or []):
            self.meter.note_request(request)
            checkpoint_ns = (metadata or {}).get("langgraph_checkpoint_ns")
            if isinstance(checkpoint_ns, str) and checkpoint_ns:
                self._checkpoint_ns[run_id] = checkpoint_ns
                self.meter.note_open_request(checkpoint_ns, request)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget a failed call's request size (the meter keeps its open request: the call may be a cut one)."""
        self._requests.pop(run_id, None)
        self._checkpoint_ns.pop(run_id, None)

    def on_llm_end(
        self, response: LLMResult, *, run_id: UUID, tags: list[str] | None = None, **kwargs: Any
    ) -> None:
        """Attach the request size to a call's message without usage; record internal (``nostream``) calls."""
        request = self._requests.pop(run_id, None)
        checkpoint_ns = self._checkpoint_ns.pop(run_id, None)
        if checkpoint_ns is not None:
            self.meter.close_request(checkpoint_ns)
        internal = "nostream" in (tags or [])
        for generations in response.generations:
            for generation in generations:
                message = getattr(generation, "message", None)
                if not isinstance(message, AIMessage):
                    continue
                if message.id and request is not None and not message.usage_metadata:
                    self.meter.note_input_estimate(message.id, request.tokens())
                if internal:
                    self.meter.observe(message, main_thread=False)
