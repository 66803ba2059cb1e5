"""The ceiling for the load benchmark: a bare deepagents graph streamed in-process.

``create_deep_agent`` with the product's model (:func:`~ventapp.agent.model_factory.build_model`,
same endpoint and settings) and the product's main tools, and nothing of ours: no middleware,
no backend routes, no checkpointer, no admission, metering, settlement or saves. What it
streams per second is what the agent itself can do on this machine; the product's pipeline
is measured as a share of it (issue 18).
"""

from __future__ import annotations

import time
from typing import Any

from deepagents import create_deep_agent
from langchain_core.messages import AIMessageChunk

from ventapp.agent.agent_factory import _main_tools
from ventapp.agent.model_factory import build_model
from ventapp.config import Settings
from ventapp.tools import registry


def build_ceiling(settings: Settings, checkpointer: Any = None) -> Any:
    """The bare graph: the product's model and main tools, deepagents' defaults for the rest.

    ``checkpointer`` (the product's, for an intermediate ceiling) needs a ``thread_id`` per turn.
    """
    registry.load_builtin_tools()
    return create_deep_agent(
        model=build_model(settings), tools=_main_tools(settings.tools_profile), checkpointer=checkpointer
    )


def text_of(chunk: Any) -> str:
    """Text of a streamed message chunk (str content or text parts)."""
    content = chunk.content
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


async def ceiling_stream(
    graph: Any, prompt: str, config: dict[str, Any] | None = None, product_modes: bool = False
) -> tuple[int, float | None, str]:
    """Stream one turn of the bare graph the way a minimal consumer would.

    Args:
        graph: A compiled graph (:func:`build_ceiling`, or the product's own for a split).
        prompt: The user's message.
        config: The run's config (a ``thread_id`` when the graph has a checkpointer).
        product_modes: Stream the way the product does (``["updates", "messages"]``,
            ``subgraphs=True``) instead of ``"messages"`` alone — an intermediate ceiling.

    Returns:
        ``(200, first token ms, answer text)`` — the same shape the product's streams report.
    """
    started = time.perf_counter()
    first: float | None = None
    parts: list[str] = []
    inputs = {"messages": [{"role": "user", "content": prompt}]}
    if product_modes:
        stream = graph.astream(inputs, config, stream_mode=["updates", "messages"], subgraphs=True)
    else:
        stream = graph.astream(inputs, config, stream_mode="messages")
    async for item in stream:
        if product_modes:
            _namespace, mode, data = item
            if mode != "messages":
                continue
            item = data
        chunk, _metadata = item
        if isinstance(chunk, AIMessageChunk):
            text = text_of(chunk)
            if text:
                parts.append(text)
                if first is None:
                    first = (time.perf_counter() - started) * 1000
    return 200, first, "".join(parts)
