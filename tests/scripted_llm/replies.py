"""The scripted model's reply types: what one answer of the scripted server is.

A reply is plain text (optionally with reasoning), tool calls, or an HTTP error; tests queue
them as objects or as the dicts ``/_script`` accepts. Split from ``script.py`` (the rules that
choose a reply) so each stays readable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextReply:
    """A plain assistant answer, streamed word by word.

    Attributes:
        content: The full answer text.
        reasoning: Reasoning streamed before the answer as ``reasoning_content`` deltas (as
            DeepSeek, Qwen, vLLM and llama.cpp send it); "" for none.
    """

    content: str
    reasoning: str = ""


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call the model makes.

    Attributes:
        name: Tool name, e.g. ``"calculate"``.
        arguments: JSON-serialisable arguments, e.g. ``{"expression": "1+1"}``.
        id: Optional fixed call id; the server generates ``call_<request>_<index>`` if empty.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True)
class ToolCallsReply:
    """An assistant turn consisting only of tool calls (finish reason ``tool_calls``).

    Attributes:
        calls: The calls, rendered with indices 0, 1, ... in this order.
        reasoning: Reasoning streamed before the calls; "" for none.
    """

    calls: tuple[ToolCallSpec, ...]
    reasoning: str = ""


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error in OpenAI's shape ``{"error": {"message", "type", "code"}}``.

    Attributes:
        status: HTTP status code, e.g. 500.
        message: Human-readable error message.
    """

    status: int
    message: str


Reply = TextReply | ToolCallsReply | ErrorReply


def reply_from_dict(data: Mapping[str, Any]) -> Reply:
    """Parse one queued response as posted to ``/_script``.

    Args:
        data: One of ``{"content": "text"}``,
            ``{"tool_calls": [{"name": str, "arguments": dict | str, "id"?: str}]}`` or
            ``{"error": 500, "message": "..."}``; the first two may add ``"reasoning": "..."``.

    Returns:
        The matching :data:`Reply`.

    Raises:
        ValueError: If the dict matches none of the shapes.
    """
    if "error" in data:
        return ErrorReply(status=int(data["error"]), message=str(data.get("message", "scripted error")))
    if "tool_calls" in data:
        calls = []
        for raw in data["tool_calls"]:
            args = raw.get("arguments", {})
            # Accept the OpenAI wire form (a JSON string) as well as a plain dict.
            if isinstance(args, str):
                args = json.loads(args) if args.strip() else {}
            calls.append(ToolCallSpec(name=str(raw["name"]), arguments=dict(args), id=str(raw.get("id", ""))))
        if not calls:
            raise ValueError("tool_calls must not be empty")
        return ToolCallsReply(calls=tuple(calls), reasoning=str(data.get("reasoning") or ""))
    if "content" in data:
        return TextReply(content=str(data["content"]), reasoning=str(data.get("reasoning") or ""))
    raise ValueError(f"unrecognised scripted response: {dict(data)!r}")


def as_reply(item: Reply | Mapping[str, Any]) -> Reply:
    """``item`` as a :data:`Reply` (a queued dict is parsed with :func:`reply_from_dict`)."""
    if isinstance(item, TextReply | ToolCallsReply | ErrorReply):
        return item
    return reply_from_dict(item)
