"""Login, logout, password change, who-am-I and personal API keys (issue 15).

``POST /api/auth/login`` (JSON) and ``POST /api/auth/login/form`` (the UI's login page posts
an HTML form here and is redirected: no script ever sees the token) open a server-side session
whose token travels only in the ``ventagent_session`` cookie: HTTP-only, ``SameSite=Lax``,
``Secure`` when the request came over HTTPS (``AUTH_COOKIE_SECURE``). Both are public routes and
exist in ``local`` mode only (404 ``auth_off`` otherwise). API keys need ``local`` or ``header``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse
from pydantic import BaseModel, Field

from ventapp.agent.pipeline import ChatRejected
from ventapp.api.deps import (
    PUBLIC,
    SESSION_COOKIE,
    CallerDep,
    RuntimeDep,
    client_address,
    current_settings,
    running_runtime,
)
from ventapp.api.openapi import errors
from ventapp.auth import service
from ventapp.auth.passwords import MAX_PASSWORD_CHARS
from ventapp.auth.service import AuthRejected, Caller
from ventapp.config import Settings
from ventapp.db import auth_store

router = APIRouter(prefix="/api/auth", tags=["auth"])
logger = logging.getLogger(__name__)


class Credentials(BaseModel):
    """Body of ``POST /api/auth/login``."""

    user_name: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=MAX_PASSWORD_CHARS)


class PasswordChange(BaseModel):
    """Body of ``POST /api/auth/password``."""

    current_password: str = Field(min_length=1, max_length=MAX_PASSWORD_CHARS)
    new_password: str = Field(min_length=1, max_length=MAX_PASSWORD_CHARS)


class KeyCreate(BaseModel):
    """Body of ``POST /api/auth/keys``."""

    name: str = Field(default="", max_length=100, description="What the key is for, e.g. 'legacy frontend'")


def _require_mode(settings: Settings, *modes: str) -> None:
    if settings.auth.mode not in modes:
        raise AuthRejected.by_key(404, "auth_off", "refusal.auth.off", modes=modes, mode=settings.auth.mode)


def _secure(request: Request, settings: Settings) -> bool:
    choice = settings.auth.cookie_secure
    if choice != "auto":
        return choice == "1"
    if request.url.scheme == "https":
        return True
    peer = request.client.host if request.client else None
    return (
        service.is_trusted_proxy(settings.auth, peer)
        and request.headers.get("x-forwarded-proto", "").lower() == "https"
    )


def _set_cookie(response: Response, request: Request, settings: Settings, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=settings.auth.session_ttl_s,
        path="/",
        httponly=True,
        samesite="lax",
        secure=_secure(request, settings),
    )


def _me(caller: Caller, settings: Settings) -> dict[str, Any]:
    return {
        "mode": settings.auth.mode,
        "verified": settings.auth.verified,
        "user_name": caller.name,
        "role": caller.role,
        "method": caller.method,
    }


async def _login(request: Request, user_name: str, password: str) -> tuple[Caller, str, Settings]:
    settings = current_settings()
    _require_mode(settings, "local")
    runtime = running_runtime()
    caller, token = await asyncio.to_thread(
        service.login, runtime.engine, settings.auth, user_name, password, client_address(request, settings)
    )
    return caller, token, settings


@router.post("/login", openapi_extra=PUBLIC, responses=errors(401, 404, 429, state_changing=True))
async def login(body: Credentials, request: Request) -> JSONResponse:
    """Log in (``local`` mode): sets the session cookie; ``{mode, verified, user_name, role, method}``.

    401 ``bad_credentials`` (the same for an unknown name and a wrong password); 429 ``throttled``
    with ``Retry-After`` after too many failures of the account or from the address.
    """
    caller, token, settings = await _login(request, body.user_name, body.password)
    response = JSONResponse(_me(caller, settings))
    _set_cookie(response, request, settings, token)
    return response


def _safe_next(target: str) -> str:
    """Only a path of this site, never the login page (:func:`ventapp.auth.service.safe_next`)."""
    return service.safe_next(target)


@router.post(
    "/login/form",
    openapi_extra=PUBLIC,
    status_code=303,
    response_class=RedirectResponse,
    responses={
        303: {"description": "Back to the app, or to the login page with ?error=<code>"},
        **errors(state_changing=True),
    },
)
async def login_form(
    request: Request,
    user_name: Annotated[str, Form(max_length=200)] = "",
    password: Annotated[str, Form(max_length=MAX_PASSWORD_CHARS)] = "",
    next: Annotated[str, Form(max_length=2000)] = "/",
) -> RedirectResponse:
    """The login page's form: 303 to ``next`` with the cookie set, or to ``/login?error=<code>``."""
    try:
        _caller, token, settings = await _login(request, user_name, password)
    except (AuthRejected, ChatRejected) as refused:
        # ChatRejected: 503 while the runtime starts; the page says "starting", not a JSON body.
        code = "starting" if isinstance(refused, ChatRejected) and refused.status == 503 else refused.code
        target = f"/login?error={code}&next={quote(_safe_next(next))}"
        if refused.retry_after:
            target += f"&retry_after={refused.retry_after}"
        return RedirectResponse(target, status_code=303)
    response = RedirectResponse(_safe_next(next), status_code=303)
    _set_cookie(response, request, settings, token)
    return response


@router.post("/logout", status_code=204, responses=errors(401, state_changing=True))
async def logout(caller: CallerDep, runtime: RuntimeDep) -> Response:
    """End the login session of this cookie (an API key stays valid: revoke it instead)."""
    if caller.session_hash is not None:
        await asyncio.to_thread(service.logout, runtime.engine, caller.session_hash)
        logger.info("logout of %r", caller.name)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
    return response


@router.post("/password", status_code=204, responses=errors(401, 404, state_changing=True))
async def change_password(body: PasswordChange, caller: CallerDep, runtime: RuntimeDep) -> Response:
    """Change your password (``local`` mode); your other login sessions end.

    401 ``bad_credentials`` when ``current_password`` is wrong; 400 ``weak_password``.
    """
    _require_mode(runtime.settings, "local")
    await asyncio.to_thread(
        service.change_password, runtime.engine, caller, body.current_password, body.new_password
    )
    return Response(status_code=204)


@router.get("/me", responses=errors(401))
async def me(caller: CallerDep) -> dict[str, Any]:
    """Who you are to this server: ``{mode, verified, user_name, role, method}``.

    ``verified`` is false in ``AUTH_MODE=none``: the name is only what the client stated.
    """
    return _me(caller, current_settings())


@router.get("/keys", responses=errors(401, 404))
async def list_keys(caller: CallerDep, runtime: RuntimeDep) -> dict[str, Any]:
    """Your API keys, newest first: ``{items: [{id, name, prefix, created_at, last_used_at,
    revoked_at, active}]}`` (never the key itself)."""
    _require_mode(runtime.settings, "local", "header")
    rows = await asyncio.to_thread(auth_store.list_api_keys, runtime.engine, caller.name)
    return {"items": [service.key_public(row) for row in rows]}


@router.post("/keys", status_code=201, responses=errors(401, 404, state_changing=True))
async def create_key(caller: CallerDep, runtime: RuntimeDep, body: KeyCreate | None = None) -> dict[str, Any]:
    """Create an API key: 201 with the key's fields and ``key``, the secret — shown this once only.

    Send it as ``Authorization: Bearer <key>`` (``/api/chat`` included).
    """
    _require_mode(runtime.settings, "local", "header")
    row, plaintext = await asyncio.to_thread(
        service.create_api_key, runtime.engine, caller, (body or KeyCreate()).name
    )
    return {**service.key_public(row), "key": plaintext}


@router.delete("/keys/{key_id}", status_code=204, responses=errors(401, 404, state_changing=True))
async def revoke_key(key_id: str, caller: CallerDep, runtime: RuntimeDep) -> Response:
    """Revoke one of your API keys (at once: its next request is 401); 404 when not yours."""
    _require_mode(runtime.settings, "local", "header")
    revoked = await asyncio.to_thread(auth_store.revoke_api_key, runtime.engine, caller.name, key_id[:16])
    if revoked is None:
        raise AuthRejected.by_key(404, "not_found", "refusal.auth.no_key")
    logger.info("API key %s of %r revoked", key_id[:16], caller.name)
    return Response(status_code=204)
