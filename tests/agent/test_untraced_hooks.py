"""Middleware hooks wrapped in LangSmith's ``traceable`` stay on the loop unless tracing is on (issue 18)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterator
from typing import Any

import langsmith
import pytest
from langsmith import traceable

from ventapp.agent import untraced_hooks


@pytest.fixture
def installed() -> Iterator[None]:
    untraced_hooks.install()
    yield
    langsmith.set_runtime_overrides()


async def test_a_traced_hook_makes_no_thread_trip_while_nothing_traces(
    installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: two worker-thread trips (span set-up and end) per hook call, a dozen hooks per model call."""
    loop = asyncio.get_running_loop()
    trips: list[Any] = []
    real = loop.run_in_executor

    def counted(executor: Any, func: Any, *args: Any) -> Any:
        trips.append(func)
        return real(executor, func, *args)

    monkeypatch.setattr(loop, "run_in_executor", counted)

    @traceable(name="Middleware.awrap_model_call")
    async def hook(request: str) -> tuple[str, str]:
        return request.upper(), threading.current_thread().name

    assert await hook("q") == ("Q", threading.current_thread().name)
    assert trips == []


async def test_while_tracing_the_span_work_goes_to_langsmiths_thread() -> None:
    called: list[str] = []

    async def default(ctx: contextvars.Context, func: Any, *args: Any, **kwargs: Any) -> Any:
        called.append(func.__name__)
        return ctx.run(func, *args, **kwargs)

    def set_up() -> str:
        return "span"

    with langsmith.tracing_context(enabled=True):
        assert (
            await untraced_hooks.inline_when_untraced(default, contextvars.copy_context(), set_up) == "span"
        )
    assert called == ["set_up"]
    with langsmith.tracing_context(enabled=False):
        assert (
            await untraced_hooks.inline_when_untraced(default, contextvars.copy_context(), set_up) == "span"
        )
    assert called == ["set_up"], "not tracing: inline"
