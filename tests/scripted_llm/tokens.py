"""The scripted model's tokenizer stand-in and stream pieces: deterministic, so tests can predict
``usage`` and the number of streamed chunks from a reply alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any


def message_text(message: Mapping[str, Any]) -> str:
    """Return the text of an OpenAI-format message.

    Args:
        message: ``{"role": ..., "content": str | list[{"type": "text", "text": str}, ...] | None}``.

    Returns:
        The content string, or the text parts joined by single spaces; ``""`` for none.
    """
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return " ".join(parts)


def count_prompt_tokens(
    messages: Iterable[Mapping[str, Any]], tools: Iterable[Mapping[str, Any]] = ()
) -> int:
    """Deterministic stand-in for a tokenizer, so tests can predict ``usage``.

    Tool definitions count as a real provider counts them (they are sent with every call, and
    are most of an agent's prompt), so the demo's usage footers look like a real model's.

    Args:
        messages: OpenAI-format messages of the request.
        tools: The request's tool definitions (OpenAI ``tools``).

    Returns:
        ``sum(len(message_text(m))) // 4 + 10 * len(messages) + len(json.dumps(tools)) // 4``
        (no tools: no last term); tool-call arguments are not counted.
    """
    messages, tools = list(messages), list(tools)
    counted = sum(len(message_text(m)) for m in messages) // 4 + 10 * len(messages)
    return counted + (len(json.dumps(tools)) // 4 if tools else 0)


def split_words(text: str) -> list[str]:
    """Split text into stream pieces: each word with its trailing whitespace.

    Args:
        text: Answer text.

    Returns:
        Pieces whose concatenation is ``text`` minus any leading whitespace; at least one piece.
    """
    return re.findall(r"\S+\s*", text) or [text]


def split_arguments(arguments: str) -> list[str]:
    """Split a tool call's argument JSON into 3 (at least 2) pieces, as real models do.

    Args:
        arguments: The serialised arguments, e.g. ``'{"expression": "1+1"}'``.

    Returns:
        Non-empty pieces whose concatenation is ``arguments``.
    """
    size = max(1, -(-len(arguments) // 3))
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [arguments]
