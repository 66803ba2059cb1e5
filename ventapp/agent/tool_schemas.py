"""Tool schemas converted once per tool, not once per model call (issue 18).

Every model call of the agent turns each bound tool into its OpenAI schema twice: the
summarisation middleware counts the tools' tokens (``count_tokens_approximately(..., tools=)``)
and ``ChatOpenAI.bind_tools`` converts them for the request. Both go through pydantic's JSON
schema generation and langchain's ``$ref`` resolution; for the product's 23 tools that was
~3 ms of CPU per conversion pass on the reference VM (``bench/`` profile in the README), twice
per call, the largest part of what the graph does before the model is asked.

A tool's schema depends only on the tool object, so both passes here keep the result per tool
object (held in a bounded LRU together with the tool, so an id is never reused while cached).
The figures are the library's own (:func:`~langchain_core.utils.function_calling.convert_to_openai_tool`
and the tool part of :func:`~langchain_core.messages.utils.count_tokens_approximately`);
only the repetition is removed.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.utils.pydantic import model_json_schema

CACHED_TOOLS = 1024
"""Tool schemas remembered per cache (an agent has ~25 tools; MCP servers and subagents add some)."""


class _PerTool:
    """A bounded map from a tool's schema (what its conversion reads) to a value.

    The key is the tool's name, description and ``args_schema`` object. Not the tool object:
    deepagents' filesystem middleware builds a new ``grep`` tool around the same schema on every
    call. The schema is kept in the entry, so its id is never reused while cached.
    """

    def __init__(self, size: int = CACHED_TOOLS) -> None:
        self._size = size
        self._items: OrderedDict[tuple[Any, ...], tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()  # graphs are also built and measured on worker threads

    def get(self, tool: BaseTool, variant: Any, make: Any) -> Any:
        schema = tool.args_schema if tool.args_schema is not None else tool
        key = (tool.name, tool.description, id(schema), variant)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] is schema:
                self._items.move_to_end(key)
                return hit[1]
        value = make()
        with self._lock:
            self._items[key] = (schema, value)
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


_OPENAI_TOOLS = _PerTool()
_TOOL_CHARS = _PerTool()


def plain_tool(tool: Any) -> bool:
    """Whether a tool's OpenAI schema may be cached: a ``BaseTool`` without provider extras.

    ``bind_tools`` copies some ``extras`` keys into the request (Anthropic/OpenAI cache hints);
    those tools are left to it unchanged.
    """
    return isinstance(tool, BaseTool) and not tool.extras


def openai_tool(tool: BaseTool, strict: bool | None = None) -> dict[str, Any]:
    """``convert_to_openai_tool(tool, strict=strict)``, converted once per tool object.

    Returns:
        ``{"type": "function", "function": {...}}``: a new outer dict each call around the
        cached ``function`` part, which nothing downstream writes to (a test checks it).
    """
    converted = _OPENAI_TOOLS.get(tool, strict, lambda: convert_to_openai_tool(tool, strict=strict))
    return dict(converted)


def _tool_chars(tool: BaseTool | dict[str, Any]) -> int:
    """Characters ``count_tokens_approximately`` counts for one tool (its JSON as the library builds it)."""
    if isinstance(tool, dict):
        return len(json.dumps(tool))

    def measure() -> int:
        schema = tool.tool_call_schema
        parameters = dict(schema) if isinstance(schema, dict) else dict(model_json_schema(schema))
        parameters.pop("title", None)
        parameters.pop("description", None)
        return len(json.dumps({"name": tool.name, "description": tool.description, "parameters": parameters}))

    return int(_TOOL_CHARS.get(tool, None, measure))


def _stand_in(chars: int) -> dict[str, str]:
    """A dict whose ``json.dumps`` is ``chars`` characters long (≥ 9): it stands for the tools."""
    return {"_": "x" * max(chars - 9, 0)}


def count_tokens_with_tools(
    messages: Iterable[Any],
    *,
    tools: Sequence[BaseTool | dict[str, Any]] | None = None,
    **kwargs: Any,
) -> int:
    """``count_tokens_approximately(messages, tools=tools, **kwargs)`` with each tool measured once.

    The same count (tokens, int ≥ 0), the usage-metadata scaling included: the library counts
    the tools as the length of their JSON, so one stand-in of the summed length (each tool's
    measured once per tool object) gives it the same characters without converting a schema.
    """
    if tools:
        tools = [_stand_in(sum(_tool_chars(tool) for tool in tools))]
    return count_tokens_approximately(messages, tools=list(tools) if tools else None, **kwargs)


def summarisation_counters(model: Any) -> tuple[Any, Any]:
    """The token counters deepagents' summarisation uses by default for ``model``, tools measured once.

    langchain replaces the default ``count_tokens_approximately`` by a model-tuned partial
    (usage-metadata scaling on; 3.3 characters per token for Anthropic models) and a second
    one without scaling for partial counts (``langchain.agents.middleware.summarization``);
    these are the same two over :func:`count_tokens_with_tools`.

    Returns:
        ``(token_counter, partial_token_counter)``.
    """
    tuned = {"chars_per_token": 3.3} if model._llm_type.startswith("anthropic-chat") else {}
    return (
        partial(count_tokens_with_tools, use_usage_metadata_scaling=True, **tuned),
        partial(count_tokens_with_tools, use_usage_metadata_scaling=False, **tuned),
    )


__all__ = ["CACHED_TOOLS", "count_tokens_with_tools", "openai_tool", "plain_tool", "summarisation_counters"]
