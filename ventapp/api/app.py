"""The FastAPI app that Reflex mounts through ``api_transformer`` (our routes match first).

Reflex mounts its own app (UI pages, ``/_event``, ``/_upload``) *inside* this one, so the
:class:`~ventapp.api.guards.HttpGuard` added here sees every request of the process.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.routing import APIRoute, APIRouter
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path
from starlette.types import ASGIApp, Receive, Scope, Send

from ventapp.agent.pipeline import ChatRejected
from ventapp.agent.refusals import rejected
from ventapp.api import (
    auth_routes,
    chat_routes,
    file_routes,
    health_routes,
    model_routes,
    preference_routes,
    resume_routes,
    schedule_routes,
    session_routes,
    stream_routes,
    usage_routes,
)
from ventapp.api.deps import PUBLIC, authenticate, identify, resolve_operator
from ventapp.api.errors import (
    auth_rejected_handler,
    chat_rejected_handler,
    error_response,
    schedule_rejected_handler,
    storage_error_handler,
    validation_error_handler,
)
from ventapp.api.guards import BODY_MARGIN_BYTES, HttpGuard, OriginPolicy
from ventapp.auth.service import AuthRejected
from ventapp.config import Settings, get_settings
from ventapp.i18n import accept_language, has_message, t
from ventapp.scheduler.rules import ScheduleRejected

TEST_PAGE = "/static/index.html"


def create_api(
    lifespan: Callable[[FastAPI], Any] | None = None,
    *,
    settings: Settings | None = None,
    serves_ui: Callable[[], bool] = lambda: False,
    ui_port: int | None = None,
) -> FastAPI:
    """Build the API app.

    Args:
        lifespan: Only for running the API on its own (tests); under Reflex the
            transformer app's lifespan does not run and the runtime opens in
            ``app.register_lifespan_task`` instead.
        settings: For ``CORS_ORIGINS`` and ``UPLOAD_MAX_BYTES`` (default: the process's).
        serves_ui: Asked per request: does this process also serve the UI's pages (``make run``)?
            Otherwise ``GET /`` redirects to the legacy test page (spec 002), as on ``make api``.
            (Reflex decides to mount the UI after our module is imported, so it cannot be a flag.)
        ui_port: The UI's port when it is not this server's (``make dev``), so the UI's origin
            counts as the app's own.
    """
    settings = settings or get_settings()
    # Every route authenticates first (AUTH_MODE); public ones say so with openapi_extra=PUBLIC.
    # No /docs nor /redoc: their pages load Swagger/ReDoc from a CDN, which the CSP blocks and the
    # server may not reach (a blank page); _no_docs says where the document is instead.
    api = FastAPI(
        title="VentAgent API",
        version="0.1.0",
        lifespan=lifespan,
        dependencies=[Depends(authenticate)],
        docs_url=None,
        redoc_url=None,
    )
    api.add_middleware(_TestPageAtRoot, serves_ui=serves_ui)
    api.add_middleware(_Utf8QueryString)
    api.add_middleware(
        HttpGuard,
        policy=OriginPolicy(settings.cors_origins, ui_port=ui_port),
        max_body_bytes=settings.upload_max_bytes + BODY_MARGIN_BYTES,
        upload_max_bytes=settings.upload_max_bytes,
    )
    api.add_exception_handler(ChatRejected, chat_rejected_handler)
    api.add_exception_handler(ScheduleRejected, schedule_rejected_handler)
    api.add_exception_handler(AuthRejected, auth_rejected_handler)
    api.add_exception_handler(RequestValidationError, validation_error_handler)
    api.add_exception_handler(StarletteHTTPException, _http_error)
    api.add_exception_handler(OperationalError, storage_error_handler)
    for routes in (
        chat_routes,
        resume_routes,
        stream_routes,
        health_routes,
        usage_routes,
        session_routes,
        preference_routes,
        model_routes,
        schedule_routes,
        file_routes,
        auth_routes,
    ):
        api.include_router(_mark_operator_routes(routes.router))
    for path in DOCS_PATHS:
        api.add_api_route(path, _no_docs, methods=["GET"], include_in_schema=False, openapi_extra=PUBLIC)
    # Last: any other /api path answers in our JSON shape instead of the UI's HTML 404 page
    # (routes match in order, so a wrong method on a known path lands here too: 405).
    api.add_api_route(
        "/api/{path:path}",
        _no_such_route,
        methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        include_in_schema=False,
        openapi_extra=PUBLIC,  # it authenticates itself: a public path's 405 needs no identity
    )
    return api


def _needs(dependant: Dependant, call: Callable[..., Any]) -> bool:
    return any(sub.call is call or _needs(sub, call) for sub in dependant.dependencies)


def _mark_operator_routes(router: APIRouter) -> APIRouter:
    """Say ``x-role: operator`` in the document of every route that depends on the operator role,
    so clients (and the identity test matrix) learn it from ``/openapi.json``."""
    for route in router.routes:
        if isinstance(route, APIRoute) and _needs(route.dependant, resolve_operator):
            route.openapi_extra = {**(route.openapi_extra or {}), "x-role": "operator"}
    return router


class _TestPageAtRoot:
    """ASGI middleware: ``GET /`` redirects to the test page unless this process serves the UI there."""

    def __init__(self, app: ASGIApp, serves_ui: Callable[[], bool]) -> None:
        self.app = app
        self.serves_ui = serves_ui

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"] == "/"
            and scope["method"] in ("GET", "HEAD")
            and not self.serves_ui()
        ):
            await RedirectResponse(TEST_PAGE, status_code=307)(scope, receive, send)
            return
        await self.app(scope, receive, send)


_RAW_BYTE = re.compile(rb"[\x80-\xff]")


class _Utf8QueryString:
    """ASGI middleware: a query string's raw UTF-8 bytes read as UTF-8, as a browser would send them.

    ``curl "…?user_name=王工"`` sends the name's UTF-8 bytes unencoded; Starlette reads a query
    string's bytes as Latin-1 (a URL should be percent-encoded), so the name became mojibake and
    was refused as invisible characters. A query string that is valid UTF-8 gets its non-ASCII
    bytes percent-encoded, which Starlette decodes as UTF-8; any other stays as it came (the way
    the proxy's identity header is read, ``deps.proxy_header_values``).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("query_string", b"") if scope["type"] in ("http", "websocket") else b""
        if raw and _RAW_BYTE.search(raw):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                encoded = _RAW_BYTE.sub(lambda byte: b"%%%02X" % byte[0][0], raw)
                scope = {**scope, "query_string": encoded}
        await self.app(scope, receive, send)


_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "bad_request",
}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """Framework errors (an unparsable body, …) in the one error shape, never FastAPI's bare ``detail``.

    ``message`` is the catalogue's sentence for the status (``refusal.http.<status>``) in the
    request's ``Accept-Language``; ``detail`` stays the framework's English text. (Only this app's
    routes get here: the UI's pages are Reflex's app, which answers its own errors.)
    """
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if isinstance(exc.detail, str) and exc.detail else None
    key = f"refusal.http.{exc.status_code}"
    if not has_message(key):
        key = "refusal.http.other"
    lang = accept_language(request.headers.get("accept-language"))
    response = error_response(
        exc.status_code,
        _CODES.get(exc.status_code, "bad_request"),
        t(key, lang),
        detail=detail or t(key, "en"),
    )
    response.headers.update(exc.headers or {})
    return response


def _methods_of(request: Request) -> tuple[set[str], bool]:
    """Methods the OpenAPI document lists for this request's path (the most literal template wins,
    so ``/api/sessions/search`` is not also ``/api/sessions/{session_id}``), and whether they are
    all public (``x-auth: public``, e.g. ``/api/auth/login``); ``(set(), False)`` for an unknown path."""
    matching: list[tuple[int, set[str], bool]] = []
    for template, operations in request.app.openapi()["paths"].items():
        regex, _, _ = compile_path(template)
        if regex.match(request.url.path):
            public = all(op.get("x-auth") == "public" for op in operations.values())
            matching.append((template.count("{"), {method.upper() for method in operations}, public))
    if not matching:
        return set(), False
    fewest = min(params for params, _, _ in matching)
    chosen = [(methods, public) for params, methods, public in matching if params == fewest]
    return set().union(*(methods for methods, _ in chosen)), all(public for _, public in chosen)


async def _no_such_route(request: Request) -> JSONResponse:
    """404 ``no_route`` for an unknown ``/api`` path, 405 ``wrong_method`` (with ``Allow``) for a
    known path's unlisted method. With ``AUTH_MODE`` on, a caller without an identity gets the 401
    every protected route gives first, so a probe learns nothing of which paths exist; only a
    public path's 405 is answered to anyone (its route is no secret)."""
    allowed, public = _methods_of(request)
    if not public:
        await identify(request)  # raises AuthRejected (401) when auth is on and nobody is known
    if allowed:
        response = await chat_rejected_handler(
            request,
            rejected(
                405,
                "method_not_allowed",
                "refusal.wrong_method",
                path=request.url.path,
                method=request.method,
                allowed=", ".join(sorted(allowed)),
            ),
        )
        response.headers["Allow"] = ", ".join(sorted(allowed))
        return response
    return await chat_rejected_handler(
        request, rejected(404, "not_found", "refusal.no_route", method=request.method, path=request.url.path)
    )


DOCS_PATHS = ("/docs", "/redoc")


async def _no_docs(request: Request) -> JSONResponse:
    """404 JSON naming ``/openapi.json`` (FastAPI's pages need a CDN: see ``create_api``)."""
    return await chat_rejected_handler(
        request, rejected(404, "not_found", "refusal.no_docs", path=request.url.path)
    )
