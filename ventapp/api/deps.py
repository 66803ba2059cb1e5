"""Request dependencies: who is asking, and the runtime.

``resolve_user`` is the single place the caller's identity is decided (spec 000 §六
gap 1: today the client states ``user_name``; real authentication replaces this one
function and nothing else). Every route applies the same rule,
:func:`ventapp.agent.identity.normalize_user_name`, wherever the name travels: the query
string (reads and session routes, :data:`CurrentUser`), the form (``/api/chat`` and
``/api/chat/stop``, :data:`FormUser`) or a JSON body (``/api/chat/resume``, through
:func:`user_identity`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Form, Query, Request

from ventapp.agent.identity import InvalidUserName, normalize_user_name
from ventapp.agent.pipeline import ChatRejected
from ventapp.agent.runtime import AgentRuntime, get_runtime

USER_NAME_HELP = (
    "Who is asking (self-declared). Absent: 'default'. NFC-normalised, trimmed, inner whitespace "
    "folded; blank, control or zero-width characters, or over 128 characters: 400."
)


def user_identity(raw: str | None) -> str:
    """The canonical user name, or 400 ``bad_request`` naming what to fix.

    Raises:
        ChatRejected: 400 when the name breaks the rule.
    """
    try:
        return normalize_user_name(raw)
    except InvalidUserName as exc:
        raise ChatRejected(400, "bad_request", exc.message) from None


def resolve_user(user_name: Annotated[str | None, Query(description=USER_NAME_HELP)] = None) -> str:
    """The caller's user name from the query string (absent: ``default``)."""
    return user_identity(user_name)


async def resolve_form_user(
    request: Request, user_name: Annotated[str | None, Form(description=USER_NAME_HELP)] = None
) -> str:
    """The caller's user name from a multipart or urlencoded form (absent: ``default``)."""
    if user_name is None and "user_name" in await request.form():
        user_name = ""  # FastAPI reads an empty form value as absent; an explicit blank is refused
    return user_identity(user_name)


def runtime_dep() -> AgentRuntime:
    """The process-wide runtime, or 503 while the app is starting or stopping."""
    try:
        return get_runtime()
    except RuntimeError:
        raise ChatRejected(503, "busy", "The server is starting; retry shortly.", retry_after=2) from None


CurrentUser = Annotated[str, Depends(resolve_user)]


def resolve_operator(user_name: CurrentUser) -> str:
    """The caller of an operator action (``POST /api/model/thinking``, ``POST /api/model/reload``).

    Today every caller may act (there is no authentication: see the README, "Who can reach it");
    when it arrives, this is the one place that requires the operator role (403 otherwise).
    """
    return user_name


Operator = Annotated[str, Depends(resolve_operator)]
"""The caller of an operator action (see :func:`resolve_operator`)."""
FormUser = Annotated[str, Depends(resolve_form_user)]
RuntimeDep = Annotated[AgentRuntime, Depends(runtime_dep)]
