"""Request dependencies: who is asking, and the runtime.

``resolve_user`` is the single place the caller's identity is decided (spec 000 §六
gap 1: today the client states ``user_name``; real authentication replaces this one
function and nothing else).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from ventapp.agent.pipeline import ChatRejected
from ventapp.agent.runtime import AgentRuntime, get_runtime


def resolve_user(user_name: Annotated[str, Query(max_length=128)] = "default") -> str:
    """The caller's user name from the query string (default ``default``)."""
    name = user_name.strip()
    if not name:
        raise ChatRejected(400, "bad_request", "user_name must not be blank.")
    return name


def runtime_dep() -> AgentRuntime:
    """The process-wide runtime, or 503 while the app is starting or stopping."""
    try:
        return get_runtime()
    except RuntimeError:
        raise ChatRejected(503, "busy", "The server is starting; retry shortly.", retry_after=2) from None


CurrentUser = Annotated[str, Depends(resolve_user)]
RuntimeDep = Annotated[AgentRuntime, Depends(runtime_dep)]
