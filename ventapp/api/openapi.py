"""What the OpenAPI document says about errors: one body shape, every status a route can answer.

Every error of the API is ``{detail, message, code[, retry_after][, ...]}``
(:func:`ventapp.api.errors.error_response`); :class:`ErrorBody` is that shape as a model,
and :func:`errors` lists it under each status a route declares. Statuses every route
can answer — 400 (``user_name`` breaks the rule), 405, 413 (body too large), 503 (the
server is starting) and, for state-changing methods, 403 (cross-site) — come from
:data:`COMMON` and :data:`STATE_CHANGING` so no route forgets them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainSerializer, WithJsonSchema

from ventapp.agent.events import EVENT_TYPES
from ventapp.db.models import iso_utc

_MEANING = {
    400: "Bad input (blank message, user_name breaking the rule, bad upload, unknown skill)",
    401: "Not authenticated (AUTH_MODE local/header): log in, send an API key, or come through the proxy",
    403: "Cross-site request from an origin not listed in CORS_ORIGINS, or an operator action by a user",
    404: "Not found, or another user's (never 403)",
    405: "Method not allowed",
    409: "Conflict: the session is busy, a duplicate request_id, or a stale interrupt_token",
    410: "Gone: the frames asked for are no longer kept",
    413: "Request body or upload too large",
    415: "Wrong content type",
    422: "Malformed request (missing or invalid fields); `errors` lists them",
    429: "Run limit or daily quota reached; wait `retry_after` seconds",
    500: "The operation failed on the server; nothing was changed (the message says what to check)",
    503: "The server is starting, or the model has no price",
}


class ErrorBody(BaseModel):
    """The one JSON error body of the API.

    ``message`` is the sentence for people, in the request's ``Accept-Language`` (default zh-CN) where
    the catalogue words it; ``detail`` is the English sentence the chat, session and file routes have
    always answered (FastAPI clients read it; elsewhere it equals ``message``); ``code`` is machine-readable
    (``bad_request``, ``not_found``, ``busy``, ``duplicate_request``, ``too_large``, ``forbidden``,
    ``quota``, ``model_unpriced`` …); ``retry_after`` (seconds, also the ``Retry-After`` header)
    comes with 429 and 503. Some errors add fields, e.g. a duplicate ``request_id`` adds the
    original ``session_id`` and ``run_id``, a 422 adds ``errors``.
    """

    model_config = ConfigDict(extra="allow")

    detail: str = Field(
        description="The sentence in English for the chat, session and file routes; else = message"
    )
    message: str = Field(description="The sentence in the request's Accept-Language (default zh-CN)")
    code: str
    retry_after: int | None = Field(default=None, description="seconds to wait before retrying")
    errors: list[dict[str, Any]] | None = Field(default=None, description="422 only: each invalid field")
    session_id: str | None = Field(default=None, description="409 duplicate_request: the original session")
    run_id: str | None = Field(default=None, description="409 duplicate_request: the original run")


COMMON = (400, 401, 405, 413, 422, 503)
"""Statuses any route can answer (identity rule, authentication, method, body size, validation, start-up)."""
STATE_CHANGING = (*COMMON, 403)
"""Plus the cross-site refusal of POST/PUT/PATCH/DELETE."""


def errors(*statuses: int, state_changing: bool = False) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: :class:`ErrorBody` under each status (and the common ones).

    Args:
        statuses: The route's own error statuses, e.g. ``404, 409``.
        state_changing: True for POST/PUT/PATCH/DELETE routes (adds 403).
    """
    every = sorted({*(STATE_CHANGING if state_changing else COMMON), *statuses})
    return {status: {"model": ErrorBody, "description": _MEANING.get(status, "Error")} for status in every}


def _as_utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


UtcDateTime = Annotated[
    datetime,
    AfterValidator(_as_utc),
    PlainSerializer(iso_utc, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
"""A timestamp the database keeps as naive UTC, sent with its zone (``…T09:50:25.444809Z``):
RFC 3339 ``date-time`` requires one, and a browser reads a zoneless one as local time. Written by
:func:`~ventapp.db.models.iso_utc`, the one format of every API timestamp."""

CONTRACT_FRAME: dict[str, Any] = {
    "type": "object",
    "required": ["type", "session_id"],
    "properties": {
        "type": {"type": "string", "enum": list(EVENT_TYPES)},
        "session_id": {"type": "string"},
        "trace_id": {"type": "string"},
        "seq": {"type": "integer", "minimum": 1, "description": "The frame's number in its run"},
    },
    "additionalProperties": True,
    "description": "One contract event (fields per type: spec 002 and ventapp/agent/events.py).",
}

SSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The run's contract events as Server-Sent Events, one `data: {json}` frame each",
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "required": ["data"],
                    "properties": {
                        "data": {
                            "type": "string",
                            "contentMediaType": "application/json",
                            "contentSchema": CONTRACT_FRAME,
                        },
                        "event": {"type": "string", "enum": ["message"]},
                    },
                }
            }
        },
        "headers": {
            name: {"schema": {"type": "string"}, "required": True}
            for name in ("X-Session-Id", "X-Trace-Id", "X-Run-Id")
        },
    }
}
"""``responses=`` entry of the streaming routes (``/api/chat``, ``/api/chat/resume``)."""

SSE_JOIN_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        **SSE_RESPONSE[200],
        "description": "The run's frames after the given seq, then the live ones: `id: <seq>` and `data: {json}`",
        "content": {
            "text/event-stream": {
                "schema": {
                    **SSE_RESPONSE[200]["content"]["text/event-stream"]["schema"],
                    "properties": {
                        **SSE_RESPONSE[200]["content"]["text/event-stream"]["schema"]["properties"],
                        "id": {"type": "string", "pattern": "^[0-9]+$"},
                    },
                }
            }
        },
    }
}
"""``responses=`` entry of ``GET /api/chat/stream`` (frames with an ``id:`` line)."""
