"""The FastAPI app that Reflex mounts through ``api_transformer`` (our routes match first)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError

from ventapp.agent.pipeline import ChatRejected
from ventapp.api import chat_routes, health_routes, resume_routes, session_routes, usage_routes
from ventapp.api.errors import (
    chat_rejected_handler,
    error_response,
    storage_error_handler,
    validation_error_handler,
)


def create_api(lifespan: Callable[[FastAPI], Any] | None = None) -> FastAPI:
    """Build the API app.

    Args:
        lifespan: Only for running the API on its own (tests); under Reflex the
            transformer app's lifespan does not run and the runtime opens in
            ``app.register_lifespan_task`` instead.
    """
    api = FastAPI(title="VentAgent API", version="0.1.0", lifespan=lifespan)
    api.add_exception_handler(ChatRejected, chat_rejected_handler)
    api.add_exception_handler(RequestValidationError, validation_error_handler)
    api.add_exception_handler(OperationalError, storage_error_handler)
    api.include_router(chat_routes.router)
    api.include_router(resume_routes.router)
    api.include_router(health_routes.router)
    api.include_router(usage_routes.router)
    api.include_router(session_routes.router)
    # Last: any other /api path answers in our JSON shape instead of the UI's HTML 404 page
    # (routes match in order, so a wrong method on a known path lands here too).
    api.add_api_route(
        "/api/{path:path}",
        _no_such_route,
        methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        include_in_schema=False,
    )
    return api


async def _no_such_route(request: Request) -> JSONResponse:
    return error_response(
        404,
        "not_found",
        f"There is no {request.method} {request.url.path} route. See the README for the API.",
    )
