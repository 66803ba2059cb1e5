"""Stop the runs of this process at the stop signal, so that a streaming answer cannot hold up a shutdown.

Granian (Reflex's server) answers SIGTERM or Ctrl-C by letting every open response finish, and only
then ends the app's lifespan, whose end stops the runs (:meth:`AgentRuntime.close`); its supervisor
waits for the worker without a time limit. An answer streaming to a client (``POST /api/chat``,
``/api/chat/resume``, a follower of ``/api/chat/stream``) therefore kept ``make api`` running for as
long as the answer went on — minutes with a real model. Here the signal itself stops the runs
(:meth:`AgentRuntime.begin_shutdown`): each ends within moments as a stop does, its response ends,
and the shutdown goes on.

The handler is chained in front of the one installed (the server's, which asyncio or Granian calls
through the signal wake-up file, which stays in place), in the process's main thread only (where
Python delivers signals); elsewhere (an in-thread test server) nothing is installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def on_stop_signals(begin_shutdown: Callable[[], Any]) -> Iterator[bool]:
    """While entered, a stop signal also schedules ``begin_shutdown`` on the running event loop.

    Args:
        begin_shutdown: Called once per signal on the loop (e.g. :meth:`AgentRuntime.begin_shutdown`).

    Yields:
        True when the handlers are installed (main thread); False otherwise.
    """
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    loop = asyncio.get_running_loop()
    previous: dict[int, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(begin_shutdown)
        before = previous.get(signum)
        if callable(before):
            before(signum, frame)
        elif before == signal.SIG_DFL:  # the default action (end the process) still happens
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for signum in STOP_SIGNALS:
        previous[signum] = signal.getsignal(signum)
        signal.signal(signum, handler)
    try:
        yield True
    finally:
        for signum, before in previous.items():
            if signal.getsignal(signum) is handler and before is not None:
                signal.signal(signum, before)
