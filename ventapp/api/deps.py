"""Request dependencies: who is asking, and the runtime.

Identity is decided here and nowhere else (spec 000 §六 gap 1; issue 15). Two steps:

1. :func:`authenticate` runs before every route (the app's global dependency). By ``AUTH_MODE``:
   ``none`` — nothing to check, the route's stated ``user_name`` is the caller (today's
   behaviour, for trusted networks and the legacy 1.5 frontend); ``local`` — a personal API key
   (``Authorization: Bearer va_…``) or the login session cookie; ``header`` — the user named in
   ``AUTH_TRUSTED_HEADER`` by a proxy in ``AUTH_TRUSTED_PROXIES`` (the header from any other
   address is 401 ``forged_identity``), or an API key. Nothing valid: 401 ``unauthenticated``.
   A route marked public (``openapi_extra={"x-auth": "public"}``: ``/health``, login) skips it.
2. The route's name parameter — query string (:data:`CurrentUser`), form (:data:`FormUser`) or
   JSON body (:func:`caller_name`) — yields the authenticated name; a stated ``user_name`` that
   disagrees is ignored and logged, never trusted. In ``none`` mode the stated name goes through
   :func:`ventapp.agent.identity.normalize_user_name` as before.

Operator routes add :data:`Operator` (403 ``operator_only`` for anyone else).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

from fastapi import Depends, Form, Query, Request

from ventapp.agent.identity import InvalidUserName, normalize_user_name
from ventapp.agent.refusals import rejected, user_name_refused
from ventapp.agent.runtime import AgentRuntime, get_runtime
from ventapp.auth.service import (
    AuthRejected,
    Caller,
    api_key_caller,
    is_trusted_proxy,
    proxy_identity,
    role_of,
    session_caller,
)
from ventapp.config import Settings, get_settings

logger = logging.getLogger(__name__)

SESSION_COOKIE = "ventagent_session"
"""The login session cookie (HTTP-only, ``SameSite=Lax``, ``Secure`` over HTTPS)."""
PUBLIC = {"x-auth": "public"}
"""``openapi_extra`` of a route anyone may call in every mode."""
MAX_WHOLE = 2**63 - 1
"""The largest whole number a query parameter or header may carry (a page offset, a ``seq``): the
database's 64-bit INTEGER; a larger one is refused with 422, never a 500 from the driver."""
USER_NAME_HELP = (
    "Who is asking. AUTH_MODE=none: self-declared (absent: 'default'; NFC-normalised, trimmed, inner "
    "whitespace folded; blank, control or zero-width characters, or over 128 characters: 400). "
    "local/header: ignored (logged) when it differs from the authenticated user."
)


def user_identity(raw: str | None) -> str:
    """The canonical user name, or 400 ``bad_request`` naming what to fix.

    Raises:
        ChatRejected: 400 when the name breaks the rule.
    """
    try:
        return normalize_user_name(raw)
    except InvalidUserName as exc:
        raise user_name_refused(exc) from None


def running_runtime() -> AgentRuntime:
    """The process-wide runtime, or 503 while the app is starting or stopping."""
    try:
        return get_runtime()
    except RuntimeError:
        raise rejected(503, "busy", "refusal.starting", retry_after=2) from None


async def runtime_dep() -> AgentRuntime:
    """:func:`running_runtime` as a route dependency.

    Dependencies here are ``async def`` although none waits: FastAPI runs a plain ``def``
    dependency on a worker thread, a thread hop per request (issue 18).
    """
    return running_runtime()


def current_settings() -> Settings:
    """The settings the runtime was opened with (the process's before it opened)."""
    try:
        return get_runtime().settings
    except RuntimeError:
        return get_settings()


def client_address(request: Request, settings: Settings) -> str:
    """The client's address: the TCP peer, or — when that peer is a trusted proxy — the last
    address the proxy appended to ``X-Forwarded-For``."""
    peer = request.client.host if request.client else ""
    if is_trusted_proxy(settings.auth, peer):
        forwarded = request.headers.get("x-forwarded-for", "")
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-1]
    return peer


def _bearer(request: Request) -> str | None:
    value = request.headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def proxy_header_values(request: Request, header: str) -> list[str]:
    """Every value of the proxy's identity ``header``, its raw bytes decoded as UTF-8.

    Starlette decodes header values as Latin-1 (what HTTP guarantees), which turns a UTF-8 name
    such as ``王工`` — what oauth2-proxy, Authelia and nginx ``auth_request`` pass on as they get
    it from the identity provider — into mojibake the user-name rule refuses.

    Raises:
        AuthRejected: 401 ``unauthenticated`` (``refusal.proxy_user.not_utf8``) for bytes that are
            not UTF-8: guessing another encoding could make two people one identity.
    """
    wanted = header.lower().encode("latin-1")
    try:
        return [value.decode("utf-8") for key, value in request.headers.raw if key.lower() == wanted]
    except UnicodeDecodeError:
        raise AuthRejected.by_key(
            401, "unauthenticated", "refusal.proxy_user.not_utf8", header=header
        ) from None


def _identify(request: Request, settings: Settings, runtime: AgentRuntime) -> Caller:
    """The caller of a request in ``local`` or ``header`` mode. Blocking (database): use a thread.

    Raises:
        AuthRejected: 401 ``forged_identity`` or ``unauthenticated``.
    """
    auth = settings.auth
    peer = request.client.host if request.client else None
    if auth.mode == "header" and auth.trusted_header in request.headers:
        if not is_trusted_proxy(auth, peer):
            logger.warning(
                "%s from %s carries %s but does not come from a trusted proxy: refused",
                request.url.path,
                peer,
                auth.trusted_header,
            )
            raise AuthRejected.by_key(401, "forged_identity", "refusal.auth.forged_identity")
        name = proxy_identity(proxy_header_values(request, auth.trusted_header), auth.trusted_header)
        return Caller(name, role_of(runtime.engine, auth, name), "header")
    bearer = _bearer(request)
    if bearer is not None:
        caller = api_key_caller(runtime.engine, auth, bearer)
        if caller is None:
            raise AuthRejected.by_key(401, "unauthenticated", "refusal.auth.bad_api_key")
        return caller
    cookie = request.cookies.get(SESSION_COOKIE)
    if auth.mode == "local" and cookie:
        caller = session_caller(runtime.engine, cookie)
        if caller is not None:
            return caller
    key = "refusal.auth.log_in_first" if auth.mode == "local" else "refusal.auth.through_proxy"
    raise AuthRejected.by_key(401, "unauthenticated", key)


async def authenticate(request: Request) -> Caller | None:
    """The app's global dependency: who is calling (None in ``none`` mode and on public routes).

    Sets ``request.state.caller`` for the name parameters below.

    Raises:
        AuthRejected: 401 in ``local``/``header`` mode without a valid identity.
        ChatRejected: 503 while the runtime is starting.
    """
    request.state.caller = None
    route = request.scope.get("route")
    if (getattr(route, "openapi_extra", None) or {}).get("x-auth") == "public":
        return None
    return await identify(request)


async def identify(request: Request) -> Caller | None:
    """Who is calling, whatever the route (None in ``none`` mode); sets ``request.state.caller``.

    :func:`authenticate` without its public-route exception: the catch-all of unknown ``/api``
    paths asks it itself, so that only a caller with an identity learns which paths exist.

    Raises:
        AuthRejected: 401 in ``local``/``header`` mode without a valid identity.
        ChatRejected: 503 while the runtime is starting.
    """
    settings = current_settings()
    if settings.auth.mode == "none":
        return None
    runtime = running_runtime()
    caller = await asyncio.to_thread(_identify, request, settings, runtime)
    request.state.caller = caller
    return caller


def caller_name(request: Request, stated: str | None) -> str:
    """The name a route acts as: the authenticated caller's, or in ``none`` mode the stated one.

    Raises:
        ChatRejected: 400 in ``none`` mode when the stated name breaks the rule.
    """
    caller: Caller | None = getattr(request.state, "caller", None)
    if caller is None:
        return user_identity(stated)
    if stated is not None:
        try:
            same = normalize_user_name(stated) == caller.name
        except InvalidUserName:
            same = False
        if not same:
            logger.warning(
                "user_name %r on %s %s ignored: the caller is %r (by %s)",
                stated[:140],
                request.method,
                request.url.path,
                caller.name,
                caller.method,
            )
    return caller.name


async def resolve_user(
    request: Request, user_name: Annotated[str | None, Query(description=USER_NAME_HELP)] = None
) -> str:
    """The caller's user name (``none`` mode: from the query string; absent: ``default``)."""
    return caller_name(request, user_name)


async def resolve_form_user(
    request: Request, user_name: Annotated[str | None, Form(description=USER_NAME_HELP)] = None
) -> str:
    """The caller's user name (``none`` mode: from a multipart or urlencoded form; absent: ``default``)."""
    if user_name is None and "user_name" in await request.form():
        user_name = ""  # FastAPI reads an empty form value as absent; an explicit blank is refused
    return caller_name(request, user_name)


CurrentUser = Annotated[str, Depends(resolve_user)]


async def resolve_caller(request: Request, user_name: CurrentUser) -> Caller:
    """The caller with their role (``none`` mode: operator when ``AUTH_NONE_OPERATORS`` names them)."""
    caller: Caller | None = getattr(request.state, "caller", None)
    if caller is not None:
        return caller
    settings = current_settings()
    return Caller(user_name, "operator" if user_name in settings.auth.none_operators else "user", "none")


CallerDep = Annotated[Caller, Depends(resolve_caller)]
"""The caller and their role (:func:`resolve_caller`)."""


async def resolve_operator(caller: CallerDep) -> str:
    """The caller of an operator action (thinking level, reload, others' quotas and usage).

    Raises:
        AuthRejected: 403 ``operator_only`` for a caller without the operator role.
    """
    if not caller.is_operator:
        key = "refusal.auth.operator_only_none" if caller.method == "none" else "refusal.auth.operator_only"
        raise AuthRejected.by_key(403, "operator_only", key)
    return caller.name


Operator = Annotated[str, Depends(resolve_operator)]
"""The caller of an operator action (see :func:`resolve_operator`)."""
FormUser = Annotated[str, Depends(resolve_form_user)]
RuntimeDep = Annotated[AgentRuntime, Depends(runtime_dep)]
