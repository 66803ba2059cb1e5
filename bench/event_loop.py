"""The event loop a bench runs its own consumers on: the one the product's server runs on.

Granian (the production backend under ``reflex run --env prod``) and uvicorn both take uvloop
when it is installed (granian's ``loop="auto"``, uvicorn's ``loop="auto"``), and
requirements.txt pins it, so ``/api/chat`` runs on uvloop. In-process consumers compared with
it (the product's pipeline, the bare-graph ceiling) run on the same loop here, so a ratio
between them measures the pipeline and HTTP, not two event loops (issue 18).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_name() -> str:
    """``"uvloop"`` when installed (what the server runs on), else ``"asyncio"``."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end on a new loop of the server's kind (like :func:`asyncio.run`)."""
    if loop_name() == "asyncio":
        return asyncio.run(main)
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)
