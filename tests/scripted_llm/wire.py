"""What an OpenAI-compatible server sends for a scripted reply: its dialects, the JSON
completion and the streamed chunks (:mod:`tests.scripted_llm.server` serves them over HTTP).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tests.scripted_llm.replies import TextReply, ToolCallsReply
from tests.scripted_llm.script import MODEL_NAME
from tests.scripted_llm.tokens import count_prompt_tokens, split_arguments, split_words


@dataclass(frozen=True)
class Dialect:
    """How closely the server imitates OpenAI's own API, for compatibility tests.

    Attributes:
        name: ``openai`` | ``strict`` | ``sloppy`` (see :data:`DIALECTS`).
        refuse_list_content: Answer 500 to a message whose ``content`` is a list of parts.
        refuse_null_content: Answer 500 to a message whose ``content`` is ``null``.
        refuse_unalternating: Answer 500 to two ``user`` messages in a row, or to tool results out
            of the order of the calls they answer (Mistral's and Gemma's chat templates raise
            "Conversation roles must alternate user/assistant/user/assistant/...").
        repeat_tool_names: Send a tool call's function name in every streamed chunk (and, for the
            first call, a legacy ``function_call`` delta with it), as llama-cpp-python does.
        usage: Report usage (the final chunk for ``stream_options.include_usage``, the JSON field).
        reasoning_field: The delta/message field reasoning is sent in: ``reasoning_content``
            (DeepSeek, Qwen, llama.cpp) or ``reasoning`` (newer vLLM, OpenRouter).
    """

    name: str
    refuse_list_content: bool = False
    refuse_null_content: bool = False
    refuse_unalternating: bool = False
    repeat_tool_names: bool = False
    usage: bool = True
    reasoning_field: str = "reasoning_content"


DIALECTS: dict[str, Dialect] = {
    "openai": Dialect("openai"),
    # What llama-cpp-python 0.3.36 refuses: its chat templates take string content only.
    "strict": Dialect(
        "strict", refuse_list_content=True, refuse_null_content=True, refuse_unalternating=True
    ),
    # What llama-cpp-python 0.3.36 streams: names repeated per chunk, no usage chunk.
    "sloppy": Dialect("sloppy", repeat_tool_names=True, usage=False),
    # Newer vLLM (and OpenRouter) name the reasoning delta `reasoning`.
    "vllm": Dialect("vllm", reasoning_field="reasoning"),
}
"""The dialects by name: ``openai`` (default), ``strict`` and ``sloppy`` (issue 19)."""


def dialect_refusal(dialect: Dialect, body: Mapping[str, Any]) -> str | None:
    """The 500 message a strict server answers ``body`` with, or None when it takes it."""
    asked: list[str] = []  # the call ids the last assistant message asked for, not yet answered
    before = ""
    for position, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role") or "")
        if dialect.refuse_unalternating:
            if role == "user" and before == "user":
                return "Conversation roles must alternate user/assistant/user/assistant/..."
            if role == "assistant":
                asked = [str(call.get("id")) for call in message.get("tool_calls") or []]
            elif role == "tool":
                if asked and message.get("tool_call_id") != asked[0]:
                    return f"messages[{position}]: tool results must follow the order of the tool calls"
                asked = asked[1:]
            before = role
        content = message.get("content")
        if dialect.refuse_list_content and isinstance(content, list):
            return f"messages[{position}].content: list content is not supported, expected a string"
        if dialect.refuse_null_content and "content" in message and content is None:
            return f"messages[{position}].content: null is not a valid string"
    return None


def _call_id(reply: ToolCallsReply, request_no: int, index: int) -> str:
    return reply.calls[index].id or f"call_{request_no}_{index}"


def _reasoning_tokens(reply: TextReply | ToolCallsReply) -> int:
    return len(split_words(reply.reasoning)) if reply.reasoning else 0


def _completion_tokens(reply: TextReply | ToolCallsReply) -> int:
    # One "token" per streamed piece, so streaming and non-streaming agree and
    # tests can compute the number from the reply alone. Reasoning counts as completion,
    # as DeepSeek and OpenAI count it.
    if isinstance(reply, TextReply):
        return len(split_words(reply.content)) + _reasoning_tokens(reply)
    return sum(
        1 + len(split_arguments(json.dumps(call.arguments))) for call in reply.calls
    ) + _reasoning_tokens(reply)


def _usage(body: Mapping[str, Any], reply: TextReply | ToolCallsReply) -> dict[str, Any]:
    prompt = count_prompt_tokens(body.get("messages") or [], body.get("tools") or [])
    completion = _completion_tokens(reply)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reply.reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": _reasoning_tokens(reply)}
    return usage


def completion_json(
    body: Mapping[str, Any], reply: TextReply | ToolCallsReply, request_no: int, dialect: Dialect
) -> dict[str, Any]:
    """The non-streamed ``chat.completion`` for ``reply`` (the ``request_no``-th request)."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if reply.reasoning:
        message[dialect.reasoning_field] = reply.reasoning
    if isinstance(reply, TextReply):
        message["content"] = reply.content
        finish_reason = "stop"
    else:
        message["tool_calls"] = [
            {
                "id": _call_id(reply, request_no, i),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for i, call in enumerate(reply.calls)
        ]
        finish_reason = "tool_calls"
    completion = {
        "id": f"chatcmpl-scripted-{request_no}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_NAME,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
    }
    return {**completion, "usage": _usage(body, reply)} if dialect.usage else completion


def _deltas(reply: TextReply | ToolCallsReply, request_no: int, dialect: Dialect) -> list[dict[str, Any]]:
    # Reasoning first, in its own deltas with empty content, as the providers stream it.
    thinking: list[dict[str, Any]] = (
        [
            {"role": "assistant", "content": "", dialect.reasoning_field: piece}
            for piece in split_words(reply.reasoning)
        ]
        if reply.reasoning
        else []
    )
    return thinking + _answer_deltas(reply, request_no, dialect)


def _answer_deltas(
    reply: TextReply | ToolCallsReply, request_no: int, dialect: Dialect
) -> list[dict[str, Any]]:
    if isinstance(reply, TextReply):
        words = split_words(reply.content)
        return [{"role": "assistant", "content": words[0]}, *({"content": word} for word in words[1:])]
    deltas: list[dict[str, Any]] = []
    for index, call in enumerate(reply.calls):
        # The header chunk carries id/name with empty arguments and the JSON follows
        # in pieces, which is exactly what client-side chunk merging must cope with.
        header = {
            "index": index,
            "id": _call_id(reply, request_no, index),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        delta: dict[str, Any] = {"tool_calls": [header]}
        if index == 0:
            delta = {"role": "assistant", "content": None, **delta}
        deltas.append(delta)
        named = {"name": call.name} if dialect.repeat_tool_names else {}
        for piece in split_arguments(json.dumps(call.arguments)):
            delta = {"tool_calls": [{"index": index, "function": {**named, "arguments": piece}}]}
            if dialect.repeat_tool_names and index == 0:
                # llama-cpp-python also streams the legacy function_call delta, name included.
                delta["function_call"] = {**named, "arguments": piece}
            deltas.append(delta)
    return deltas


def stream_chunks(
    body: Mapping[str, Any], reply: TextReply | ToolCallsReply, request_no: int, dialect: Dialect
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects streamed for ``reply``, the usage chunk last when asked."""
    base = {
        "id": f"chatcmpl-scripted-{request_no}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_NAME,
        "system_fingerprint": None,
    }
    finish_reason = "stop" if isinstance(reply, TextReply) else "tool_calls"
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
        for delta in _deltas(reply, request_no, dialect)
    ]
    chunks.append(
        {**base, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish_reason}]}
    )
    if dialect.usage and (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": _usage(body, reply)})
    return chunks
