"""JSON error bodies ``{detail, message, code[, retry_after], ...}`` with the right status.

A refusal's ``message`` is in the request's ``Accept-Language`` (default zh-CN) when its sentence is
one of the catalogue's; ``detail`` and ``code`` never change with the language (``detail`` is the
English sentence clients have always read).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ventapp.agent.admission_checks import STORAGE_RETRY_AFTER_S
from ventapp.auth.service import AuthRejected
from ventapp.i18n import DEFAULT_LANG, accept_language, formats, t
from ventapp.refusal import Refusal
from ventapp.scheduler.rules import ScheduleRejected


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    retry_after: int | None = None,
    details: dict[str, Any] | None = None,
    detail: str | None = None,
) -> JSONResponse:
    """A JSON error response.

    ``detail`` mirrors FastAPI's own errors so clients read one key; ``retry_after``
    (seconds) is also sent as the ``Retry-After`` header; ``details`` adds fields such
    as the original ``session_id``/``run_id`` of a duplicate request; ``detail`` is ``message``
    unless given (a sentence worded per language keeps its English one there). A 422 always has
    ``errors`` (``[{type, loc, msg[, input]}]``, FastAPI's shape): the caller's, or one entry
    built from ``code``, ``detail`` and a ``field`` detail.
    """
    detail = message if detail is None else detail
    body: dict[str, Any] = {"detail": detail, "message": message, "code": code, **(details or {})}
    if status == 422 and "errors" not in body:
        # Every 422 carries the ``errors`` list FastAPI's own validation errors have, so a client
        # reads one shape: here one entry naming the field when the refusal knows it.
        field = body.get("field")
        body["errors"] = [
            {"type": code, "loc": ["body", field] if isinstance(field, str) else [], "msg": detail}
        ]
    headers = None
    if retry_after is not None:
        body["retry_after"] = retry_after
        headers = {"Retry-After": str(retry_after)}
    return JSONResponse(body, status_code=status, headers=headers)


async def chat_rejected_handler(request: Request, exc: Exception) -> JSONResponse:
    """Exception handler turning a :class:`~ventapp.refusal.Refusal` (a
    :class:`~ventapp.agent.refusals.ChatRejected`) into its HTTP status and JSON body.

    A refusal with a catalogue id (``key``) has its ``message`` in the request's ``Accept-Language``;
    ``detail`` stays its English sentence. One without (it quotes something of its own) is English.
    """
    assert isinstance(exc, Refusal)
    return error_response(
        exc.status,
        exc.code,
        exc.worded(accept_language(request.headers.get("accept-language"))),
        retry_after=exc.retry_after,
        details=exc.details,
        detail=exc.message,
    )


async def schedule_rejected_handler(request: Request, exc: Exception) -> JSONResponse:
    """:class:`ScheduleRejected` as :func:`chat_rejected_handler` does: ``message`` in the request's
    ``Accept-Language`` (:meth:`ScheduleRejected.worded`), ``detail`` and ``errors[].msg`` its English
    sentence, like every other refusal."""
    assert isinstance(exc, ScheduleRejected)
    return await chat_rejected_handler(request, exc)


async def auth_rejected_handler(request: Request, exc: Exception) -> JSONResponse:
    """:class:`~ventapp.auth.service.AuthRejected` as :func:`chat_rejected_handler` does (401 adds
    ``WWW-Authenticate``)."""
    assert isinstance(exc, AuthRejected)
    response = await chat_rejected_handler(request, exc)
    if exc.status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="ventagent"'
    return response


_LOCATIONS = ("body", "query", "path", "header", "cookie")
"""The first part of a FastAPI ``loc`` that says where a field was sent, not which field it is."""
_SHOWN_PROBLEMS = 3
"""Most problems of one request ``message`` words; ``errors`` lists them all."""
_TYPE_KEYS = {
    "missing": "refusal.invalid.missing",
    "string_too_long": "refusal.invalid.too_long",
    "too_long": "refusal.invalid.too_many",
    "literal_error": "refusal.invalid.choice",
    "enum": "refusal.invalid.choice",
    "int_parsing": "refusal.invalid.whole_number",
    "int_type": "refusal.invalid.whole_number",
    "int_from_float": "refusal.invalid.whole_number",
    "float_parsing": "refusal.invalid.number",
    "float_type": "refusal.invalid.number",
    "bool_parsing": "refusal.invalid.boolean",
    "bool_type": "refusal.invalid.boolean",
    "string_type": "refusal.invalid.text",
    "dict_type": "refusal.invalid.object",
    "model_type": "refusal.invalid.object",
    "model_attributes_type": "refusal.invalid.object",
    "list_type": "refusal.invalid.list",
    "greater_than_equal": "refusal.invalid.at_least",
    "less_than_equal": "refusal.invalid.at_most",
    "json_invalid": "refusal.invalid.json",
}
"""Pydantic's error ``type`` -> the catalogue sentence that words it (others: ``refusal.invalid.value``)."""


def _field_of(loc: Any) -> str:
    """``message.0.type`` for ``["body", "message", 0, "type"]`` (``body`` for the body itself)."""
    parts = [str(part) for part in (loc or ())]
    if len(parts) > 1 and parts[0] in _LOCATIONS:
        parts = parts[1:]
    return ".".join(parts) or "body"


def _problem(error: dict[str, Any], lang: str) -> str:
    """One validation error as a sentence in ``lang`` naming its field."""
    kind = str(error.get("type") or "")
    ctx = error.get("ctx") or {}
    key = _TYPE_KEYS.get(kind, "refusal.invalid.value")
    if kind == "string_too_short":
        key = "refusal.invalid.empty" if ctx.get("min_length") == 1 else "refusal.invalid.too_short"
    limit = ctx.get("max_length", ctx.get("min_length", ctx.get("ge", ctx.get("le", ""))))
    if isinstance(limit, int) and not isinstance(limit, bool):  # "100,000", as the other refusals write it
        limit = formats.number(limit, lang)
    # Pydantic lists the choices as English prose ("'a', 'b' or 'c'"): a plain list reads in both.
    expected = str(ctx.get("expected", "")).replace(" or ", ", ")
    return t(key, lang, field=_field_of(error.get("loc")), limit=limit, expected=expected)


def invalid_request_message(errors: list[dict[str, Any]], lang: str) -> str:
    """The ``message`` of a 422 for malformed input: a sentence per problem naming its field, in ``lang``.

    Args:
        errors: FastAPI's validation errors (``[{type, loc, msg[, ctx]}]``).
        lang: ``"zh-CN"`` or ``"en"``.

    Returns:
        E.g. ``"缺少必填字段 message。"``; past three problems one more sentence counts the rest.
    """
    sentences = [_problem(error, lang) for error in errors[:_SHOWN_PROBLEMS]]
    if len(errors) > _SHOWN_PROBLEMS:
        sentences.append(t("refusal.invalid.more", lang, count=len(errors) - _SHOWN_PROBLEMS))
    if not sentences:
        sentences.append(t("refusal.invalid.value", lang, field="body"))
    return ("" if lang == DEFAULT_LANG else " ").join(sentences)


async def validation_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """422 for malformed input, in the same JSON shape as every other error (plus ``errors``).

    ``message`` names each field at fault in the request's ``Accept-Language`` (default zh-CN);
    ``detail`` stays the English developer text (``"Invalid request: message: Field required"``)
    and ``errors`` FastAPI's list, unchanged.
    """
    assert isinstance(exc, RequestValidationError)
    problems = [
        f"{'.'.join(str(part) for part in error.get('loc', ()) if part != 'body')}: {error.get('msg', 'invalid')}"
        for error in exc.errors()
    ]
    detail = "Invalid request: " + "; ".join(problems) if problems else "Invalid request."
    lang = accept_language(request.headers.get("accept-language"))
    return error_response(
        422,
        "bad_request",
        invalid_request_message(list(exc.errors()), lang),
        details={"errors": jsonable_encoder(exc.errors())},
        detail=detail,
    )


async def storage_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """503 ``storage`` when the database refuses a route's read or write (locked, full, gone)."""
    lang = accept_language(request.headers.get("accept-language"))
    return error_response(
        503,
        "storage",
        t("refusal.storage", lang),
        retry_after=STORAGE_RETRY_AFTER_S,
        detail=t("refusal.storage", "en"),
    )
