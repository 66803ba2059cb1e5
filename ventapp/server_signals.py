"""Granian hears of a stop signal only after the open tabs were sent their stopped answers.

At SIGTERM or Ctrl-C the process stops its runs at once (:mod:`ventapp.agent.stop_signals`); each
ends with an ``error`` frame whose sentence says the server is shutting down, and a tab following
the answer commits it to its page. But a Granian worker drops every event socket as soon as it
handles the signal (its Rust runtime goes once no HTTP response is open), some milliseconds
before that sentence could be sent: the tab showed only "connection lost", never why.

Granian's worker registers its handler with ``granian._signals.set_loop_signals`` (the only place
it does, on the worker's event loop, uvloop or asyncio). :func:`install` wraps that function: the
handlers it registers tell Granian (its ``WorkerSignal``) only once the coroutine given to
:func:`holding` has returned — :meth:`AgentRuntime.settle`, which waits at most a few seconds for
the stopped runs and the tabs showing them — plus a moment for the last socket writes. A
second signal meanwhile changes nothing; without a holder (before the runtime opened, after it
closed) Granian hears at once, as before. No other server is touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

logger = logging.getLogger(__name__)

SOCKET_FLUSH_S = 0.5
"""Time for a tab's last update, queued on its socket, to be written before Granian drops it."""
HELD_SIGNALS = (signal.SIGTERM, signal.SIGINT)

_holder: list[Callable[[], Awaitable[Any]]] = []


@contextlib.contextmanager
def holding(settle: Callable[[], Awaitable[Any]]) -> Iterator[None]:
    """While entered, a stop signal reaches Granian only after ``settle()`` returned.

    Args:
        settle: A coroutine function that ends by itself within seconds (e.g. ``runtime.settle``).
    """
    _holder.append(settle)
    try:
        yield
    finally:
        _holder.remove(settle)


async def _settle_then(tell: Callable[[], Any]) -> None:
    try:
        if _holder:
            await _holder[-1]()
            await asyncio.sleep(SOCKET_FLUSH_S)
    except Exception:  # the server must hear of the signal whatever happened
        logger.exception("settling the runs before the shutdown failed")
    finally:
        tell()


def held(set_loop_signals: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Granian's ``set_loop_signals`` with the server told of a stop signal once :func:`holding`'s
    coroutine returned (see the module's docstring)."""

    def set_held_loop_signals(loop: asyncio.AbstractEventLoop) -> Any:
        event = set_loop_signals(loop)
        pending: list[asyncio.Task[None]] = []

        def on_signal(signum: int, frame: Any) -> None:
            if pending:
                return
            if not _holder:
                event.set()
                return
            pending.append(loop.create_task(_settle_then(event.set)))

        try:
            for signum in HELD_SIGNALS:
                loop.add_signal_handler(signum, on_signal, signum, None)  # in place of Granian's
        except (NotImplementedError, RuntimeError, ValueError):  # Granian's own stay in place
            logger.warning("could not hold the stop signal for the tabs; the server hears it at once")
        return event

    set_held_loop_signals.ventagent_held = True  # type: ignore[attr-defined]  # installed once
    return set_held_loop_signals


def install() -> bool:
    """Wrap Granian's ``set_loop_signals`` (before a worker calls it); idempotent.

    Returns:
        True when Granian is there and its function is wrapped.
    """
    try:
        from granian import _signals
    except ImportError:
        return False
    if not getattr(_signals.set_loop_signals, "ventagent_held", False):
        _signals.set_loop_signals = held(_signals.set_loop_signals)
    return True
