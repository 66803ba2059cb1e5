"""Middleware hooks run on the event loop when nothing traces them (issue 18).

langchain's ``create_agent`` wraps every middleware's ``awrap_model_call`` (and
``awrap_tool_call``) in LangSmith's ``traceable``. Its async wrapper hands the span's set-up
and its end to a worker thread each (``aio_to_thread``), and runs the hook in a new task —
whether or not anything traces. The agent here has a dozen such hooks around each model call
(deepagents' and ours), nested: a dozen thread round trips, one after the other, before the
request leaves, and a dozen more before the model node ends. Each round trip waits for a
worker thread and the GIL (tens of µs idle, milliseconds on a busy 2-core machine): most of
the ~11 ms between a graph's start and its model request in ``bench.profile_turn``.

LangSmith offers the hook for this (``langsmith.set_runtime_overrides(aio_to_thread=...)``,
meant for runtimes without ``run_in_executor``): :func:`inline_when_untraced` runs the set-up
and the end inline while tracing is off — they only read context variables then — and hands
them to LangSmith's own thread otherwise (``LANGSMITH_TRACING=true``: they may start a
client). With an override installed, ``traceable`` also runs the hook in the current task
under the span's context instead of creating a task per hook.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

import langsmith
from langsmith.utils import tracing_is_enabled


async def inline_when_untraced(
    default: Callable[..., Awaitable[Any]],
    ctx: contextvars.Context,
    func: Callable[..., Any],
    /,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """LangSmith's ``aio_to_thread``: ``func`` in ``ctx``, inline unless tracing is on.

    Args:
        default: LangSmith's own implementation (a worker thread), used while tracing.
        ctx: The context ``func`` must run in (LangSmith reads its tracing state back from it).
        func: The span's set-up or end.
        *args: Passed to ``func``.
        **kwargs: Passed to ``func``.

    Returns:
        What ``func`` returns.
    """
    if tracing_is_enabled():
        return await default(ctx, func, *args, **kwargs)
    return ctx.run(func, *args, **kwargs)


def install() -> None:
    """Make :func:`inline_when_untraced` LangSmith's ``aio_to_thread`` for this process (idempotent)."""
    langsmith.set_runtime_overrides(aio_to_thread=inline_when_untraced)
