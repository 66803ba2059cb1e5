"""The history a model request carries, shaped the way strict chat templates accept it.

Why: OpenAI's own API accepts a loose history, but many self-hosted models' chat templates
(Mistral's, Gemma's, some Qwen and Llama builds served by vLLM or llama.cpp) raise on two
things a cut run can leave in a thread:

* two user messages in a row — a run that failed before its model answered (the server answered
  HTTP 500, the process died) leaves the thread ending on the person's message, and the next turn
  appends another one. Anthropic's Messages API treats consecutive user turns as one turn
  (https://docs.anthropic.com/en/api/messages, "consecutive user or assistant turns ... will be
  combined into a single turn"); the request here does the same, and the thread keeps both.
* tool results out of the order of the calls — a stopped run's finished results are kept
  (:mod:`~ventapp.agent.stopped_tools`) and the calls still running are answered "did not complete"
  at request time (:class:`~ventapp.agent.nodeless_middleware.RequestPatchToolCallsMiddleware`),
  which put the unfinished ones first.

Both functions return a new list and never touch the messages in the checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage


def results_in_call_order(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``messages`` with each run of tool results after an ``AIMessage`` in the order of its calls.

    Args:
        messages: A request's history (``system``/``human``/``ai``/``tool`` messages).

    Returns:
        The same messages; a result whose ``tool_call_id`` the preceding ``AIMessage`` did not
        ask for keeps its place after the ones it did (stable order).
    """
    out = list(messages)
    i = 0
    while i < len(out):
        asked = out[i]
        i += 1
        if not isinstance(asked, AIMessage) or len(asked.tool_calls) + len(asked.invalid_tool_calls) < 2:
            continue
        end = i
        while end < len(out) and isinstance(out[end], ToolMessage):
            end += 1
        order = {call["id"]: n for n, call in enumerate((*asked.tool_calls, *asked.invalid_tool_calls))}
        last = len(order)
        out[i:end] = sorted(out[i:end], key=lambda m: order.get(getattr(m, "tool_call_id", None), last))
        i = end
    return out


def _blocks(content: str | list[Any]) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _joined(first: HumanMessage, second: HumanMessage) -> HumanMessage:
    if isinstance(first.content, str) and isinstance(second.content, str):
        content: str | list[Any] = f"{first.content}\n\n{second.content}"
    else:
        content = [*_blocks(first.content), *_blocks(second.content)]
    return HumanMessage(content=content, additional_kwargs=second.additional_kwargs, id=second.id)


def user_turns_merged(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``messages`` with every run of adjacent user messages joined into one.

    Args:
        messages: A request's history.

    Returns:
        The history with no two ``HumanMessage`` in a row: their texts joined by a blank line
        (``str`` contents) or their content blocks concatenated (images, files); the joined
        message keeps the later one's id and ``additional_kwargs``.
    """
    out: list[AnyMessage] = []
    for message in messages:
        if out and isinstance(message, HumanMessage) and isinstance(out[-1], HumanMessage):
            out[-1] = _joined(out[-1], message)
        else:
            out.append(message)
    return out


def has_adjacent_user_turns(messages: Sequence[AnyMessage]) -> bool:
    """True when two ``HumanMessage`` follow each other in ``messages`` (one pass, no copies)."""
    before = False
    for message in messages:
        now = isinstance(message, HumanMessage)
        if now and before:
            return True
        before = now
    return False
