"""``POST /api/chat`` (the 1.5 SSE contract, spec 002) and ``GET /api/chat/history/{id}``.

Thin handlers: admission, streaming and finalisation live in ``ventapp.agent.pipeline``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.message
import email.utils
import logging
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData
from starlette.datastructures import UploadFile as StarletteUpload

from ventapp.agent import events as ev
from ventapp.agent.admission_checks import owned_session
from ventapp.agent.kernel import MAIN_AGENT, label_for
from ventapp.agent.pipeline import (
    ChatRejected,
    ChatRequest,
    start_chat,
    stop_run,
)
from ventapp.agent.prefixes import apply_prefixes
from ventapp.agent.refusals import rejected
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.turn_attachments import sent_attachments
from ventapp.agent.uploads import (
    UploadRejected,
    check_upload,
    decode_upload_name,
    discard_upload,
    save_upload,
)
from ventapp.agent.workspace_links import workspace_links
from ventapp.api.deps import CurrentUser, FormUser, RuntimeDep
from ventapp.api.openapi import SSE_RESPONSE, errors
from ventapp.api.sse import stream_run
from ventapp.api.wording import RequestLang, agent_label, failure_message, worded
from ventapp.db import session_store
from ventapp.db.models import ChatMessage, ExecutionRun, iso_utc
from ventapp.db.turn_writes import SUPERSEDED_CODE
from ventapp.i18n import t

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/api/chat", tags=["chat"])


def _sent_filename(upload: UploadFile) -> bytes | None:
    """The part's file name as the client's bytes spell it, None when it sent none.

    Starlette's parser hands over a cleaned name — it drops a Windows path (``C:\\x\\a.ini``
    becomes ``a.ini``) and reads bad UTF-8 as Latin-1 — so the raw ``Content-Disposition``
    is read again (its bytes arrive as Latin-1, which round-trips them).
    """
    header = upload.headers.get("content-disposition")
    if header is None:
        return None
    parsed = email.message.Message()
    parsed["content-disposition"] = header
    name = parsed.get_param("filename", header="content-disposition")
    if name is None:
        return None
    if isinstance(name, tuple):  # RFC 2231 filename*=: already decoded by its charset
        return (upload.filename or "").encode("utf-8")
    return email.utils.unquote(name).encode("latin-1")


def _one_upload(form: FormData) -> UploadFile | None:
    """The attached file, or None; 400 for a part without a file name or more than one file.

    Browsers send an empty, nameless part for "no file": it counts as none.
    """
    parts = [part for part in form.getlist("file") if part not in ("", None)]
    parts = [
        part
        for part in parts
        if not (isinstance(part, StarletteUpload) and not part.filename and not part.size)
    ]
    if not parts:
        return None
    if len(parts) > 1:
        raise rejected(400, "bad_request", "refusal.several_files")
    part = parts[0]
    if not isinstance(part, StarletteUpload):
        raise rejected(400, "bad_request", "refusal.file_without_name")
    return part


async def _prepare_turn(runtime: AgentRuntime, request: ChatRequest, form: FormData) -> ChatRequest:
    """Apply the message prefixes and save the attached file: the request to admit.

    ``#skill:<name>`` must name an installed skill (else 400 before anything runs);
    ``#session:<uuid>`` continues that session under the usual ownership rule. The file
    is checked first and saved into the session's ``/workspace/uploads/`` (a new session
    gets its id here); the caller discards it if admission then refuses the turn.

    Raises:
        ChatRejected: 400 unknown skill, ``#session:`` conflicting with ``session_id``,
            a file without a name or with a bad one (a path, a Windows path, control
            characters, invalid UTF-8), several files, an empty file; 404 ``#session:``
            without an id; 413 file too large.
    """
    upload = _one_upload(form)
    request = apply_prefixes(request)
    session_id = request.session_id
    new_session = request.new_session
    attachments = list(request.attachments)
    if upload is not None:
        try:
            raw_name = _sent_filename(upload)
            name = decode_upload_name(raw_name) if raw_name is not None else None
            data = await upload.read(runtime.settings.upload_max_bytes + 1)
            check_upload(name, data, runtime.settings.upload_max_bytes)
            if not session_id:  # the file needs its session folder before admission
                session_id, new_session = str(uuid.uuid4()), True
            path = await asyncio.to_thread(
                save_upload, runtime.settings, request.user_name, session_id, name, data
            )
        except UploadRejected as exc:
            raise ChatRejected.passed_on(exc) from None
        attachments.append(path)
    return dataclasses.replace(
        request, session_id=session_id, new_session=new_session, attachments=attachments
    )


async def _discard_uploads(runtime: AgentRuntime, request: ChatRequest) -> None:
    """Remove the files :func:`_prepare_turn` saved for a turn that admission refused."""
    for path in request.attachments:
        await asyncio.to_thread(
            discard_upload, runtime.settings, request.user_name, request.session_id or "", path
        )


async def _require_form(request: Request) -> None:
    """415 for a JSON body, before its fields are judged missing (a route dependency runs first)."""
    if request.headers.get("content-type", "").startswith("application/json"):
        raise rejected(415, "bad_request", "refusal.json_body")


async def _say_something(request: Request) -> None:
    """400 for a ``message`` field sent empty, like one of blanks, before it is judged missing.

    FastAPI reads an empty form value as absent (422 "Field required"), and ``curl -F
    'message=   '`` trims the blanks away before sending: the sender typed a blank message, and
    gets the blank message's answer. A request without the field stays 422.
    """
    if not request.headers.get("content-type", "").startswith(("multipart/", "application/x-www-form")):
        return
    values = (await request.form()).getlist("message")
    if values and all(isinstance(value, str) and not value.strip() for value in values):
        raise rejected(400, "bad_request", "refusal.empty_message")


@router.post(
    "",
    dependencies=[Depends(_require_form), Depends(_say_something)],
    response_class=StreamingResponse,
    responses={**SSE_RESPONSE, **errors(404, 409, 415, 429, state_changing=True)},
)
async def chat(
    http_request: Request,
    runtime: RuntimeDep,
    user_name: FormUser,
    lang: RequestLang,
    message: Annotated[
        str, Form(min_length=1, description="The user's message; may start with #skill:/#session:")
    ],
    session_id: Annotated[str | None, Form()] = None,
    thread_id: Annotated[str | None, Form(description="Must equal session_id")] = None,
    mode: Annotated[str | None, Form(description="plan | full")] = None,
    request_id: Annotated[str | None, Form(description="1–128 characters; a repeat is 409")] = None,
    model: Annotated[
        str | None,
        Form(
            max_length=64, description="A model route by name (MODELS); kept as the session's. Unknown: 400"
        ),
    ] = None,
    fork_turn: Annotated[
        int | None,
        Form(
            ge=0,
            description="Edit or regenerate: the message replaces this user message of the session "
            "(0-based, as GET /api/chat/history lists them) and everything after it; needs session_id",
        ),
    ] = None,
    detach: Annotated[
        bool,
        Form(
            description="1: the run goes on when the client disconnects (join it with GET /api/chat/stream)"
        ),
    ] = False,
    file: Annotated[
        UploadFile | str | None, File(description="One attachment, saved to /workspace/uploads/")
    ] = None,
) -> StreamingResponse:
    """Run one chat turn and stream its contract events as SSE.

    Multipart fields per spec 002, plus ``model`` (a named route of ``MODELS``; the session keeps
    it, an unknown one is 400 ``unknown_model`` listing the names in ``models``) and ``fork_turn`` (edit or
    regenerate: the turn replaces that user message and all after it, as the browser UI's edit and
    regenerate do; 409 ``no_turn`` when the session has no such message); ``message`` may start with ``#skill:<name>`` and/or
    ``#session:<uuid>``, and ``file`` is saved to ``/workspace/uploads/``. Errors before the
    stream starts are JSON: 400 (empty or blank message, unknown skill, bad upload, bad user_name,
    ``fork_turn`` without ``session_id``), 404 (unknown or foreign session, thread_id ≠ session_id),
    409 (session busy, repeated request_id, ``fork_turn`` names no message), 413 (upload too large),
    422 (no message field, bad mode, negative or empty ``fork_turn``), 429 (limits).
    Failures after it starts are ``error`` frames. Each frame carries ``seq``, its number
    in the run. A client that disconnects stops the run, unless it sent ``detach=1``: then
    the run goes on and ``GET /api/chat/stream`` joins it. An ``interrupt`` frame's approval
    ``reason`` is in the ``Accept-Language`` (default zh-CN), ``reason_code`` beside it.
    """
    del file  # read from the form itself: several parts and raw file names matter (see _one_upload)
    form = await http_request.form()
    if request_id is None and "request_id" in form:
        # FastAPI turns an empty form value into None; an explicitly empty key is a client bug.
        request_id = ""
    if fork_turn is None and "fork_turn" in form:
        # Likewise: an empty fork_turn is not "no fork_turn" (that would append instead of editing).
        raise rejected(422, "bad_request", "refusal.fork_turn_empty", details={"field": "fork_turn"})
    request = ChatRequest(
        message=message,
        user_name=user_name,
        session_id=session_id or None,
        thread_id=thread_id or None,
        mode=mode or None,
        request_id=request_id,
        model=model or None,
        fork_turn=fork_turn,
        words_lang=lang,
    )
    request = await _prepare_turn(runtime, request, form)
    if fork_turn is not None and (request.new_session or not request.session_id):
        await _discard_uploads(runtime, request)
        raise rejected(400, "bad_request", "refusal.fork_needs_session")
    try:
        run = await start_chat(runtime, request)
    except ChatRejected:
        await _discard_uploads(runtime, request)  # a refused turn leaves nothing behind
        raise

    return await stream_run(run, detach=detach, lang=lang)


class Stopped(BaseModel):
    """Whether a running answer was told to stop."""

    stopped: bool


@router.post("/stop", response_model=Stopped, responses=errors(404, state_changing=True))
async def stop(runtime: RuntimeDep, user_name: FormUser, session_id: Annotated[str, Form()]) -> Stopped:
    """Stop the session's running answer: ``{"stopped": bool}``; 404 if not the user's session.

    The stream of that run ends with an ``error`` frame (code ``cancelled``); its partial
    answer is saved with a marker and the run is recorded as ``cancelled``.
    """
    return Stopped(stopped=await stop_run(runtime, session_id, user_name))


@router.get("/history/{session_id}", responses=errors(404))
async def history(session_id: str, runtime: RuntimeDep, user_name: CurrentUser, lang: RequestLang) -> Any:
    """The session's messages in order: ``{session_id, title, messages: [...]}``; 404 if not the user's.

    An answer's ``reasoning`` is the model's reasoning kept with it ("" for none); its
    ``duration_ms`` is its run's stored duration, the one its ``done`` frame carried (None while
    it waits on a pause, for a user message, or when its run is gone). A user message's
    ``attachments`` are the workspace paths of the files sent with it (``[]`` for none and on
    answers), readable through ``GET /api/sessions/{id}/files?path=…``.

    What the live stream said and the stored row does not hold, for a client that redraws the
    session as it streamed it (additive keys): ``agent_label`` is the main agent's name in the
    ``Accept-Language`` (an ``agent_done`` frame's ``label``); each of ``tool_calls`` carries ``label``, the
    tool's display name in the ``Accept-Language`` (as an ``interrupt`` frame's ``label``), and
    ``message``, a failed call's reason as its ``tool_result`` frame words it (``""`` otherwise);
    ``model_only`` is the ``citations`` frame's (True for a finished answer without a
    tool-backed source); ``error`` is the closing ``error`` frame's ``{message, code}`` of a
    failed or stopped answer (its ``message`` worded as the frame was), or for a paused answer
    the person moved on from (a new message instead of an answer) ``{message, code: "superseded"}``,
    else None.
    """
    session = await owned_session(runtime, session_id, user_name)
    rows, runs = await asyncio.to_thread(session_store.messages_and_runs, runtime.engine, session.id)
    attachments = await _sent_files(runtime, session.id, rows)
    return {
        "session_id": session.id,
        "title": session.title,
        "mode": session.mode,
        "agent_label": agent_label(MAIN_AGENT, lang),
        "messages": [
            {
                "id": row.id,
                "role": row.role,
                "content": row.content,
                "reasoning": row.reasoning or "",
                "tool_calls": [
                    {
                        **call,
                        "label": label_for(str(call.get("tool") or ""), lang),
                        "message": failure_message(call.get("content"), call.get("error"), lang),
                    }
                    for call in row.tool_calls
                ],
                "citations": row.citations,
                "usage": row.usage,
                "status": row.status,
                "run_id": row.run_id,
                "created_at": iso_utc(row.created_at),
                "duration_ms": _duration_ms(row, runs.get(row.run_id or "")),
                "attachments": attachments.get(row.id, []),
                "model_only": row.role == "assistant" and row.status == "complete" and not row.citations,
                "error": _closing_error(row, runs.get(row.run_id or ""), lang),
                "workspace_links": workspace_links(session.id, row.content or "")
                if row.role == "assistant"
                else [],
            }
            for row in rows
        ],
    }


def _closing_error(row: ChatMessage, run: ExecutionRun | None, lang: str) -> dict[str, str] | None:
    """The ``error`` frame that closed a failed or stopped answer, ``{message, code}``, as the
    stream worded it in ``lang`` (:func:`~ventapp.api.wording.worded`); None for any other row."""
    if row.role != "assistant" or run is None or not run.error_code or row.status not in _CLOSED_BY_ERROR:
        return None
    if run.error_code == SUPERSEDED_CODE:  # no frame closed it: the person sent a new message instead
        return {"message": t("live.dropped", lang), "code": SUPERSEDED_CODE}
    try:
        frame = ev.Error(message=run.error or "", code=run.error_code)  # type: ignore[arg-type]  # validated here
    except ValidationError:  # a code stored before the contract listed it: as stored
        return {"message": run.error or "", "code": run.error_code}
    worded_frame = worded(frame, lang)
    assert isinstance(worded_frame, ev.Error)
    return {"message": worded_frame.message, "code": worded_frame.code}


_CLOSED_BY_ERROR = frozenset({"failed", "cancelled"})
"""Stored answer statuses whose live stream ended with an ``error`` frame."""


def _duration_ms(row: ChatMessage, run: ExecutionRun | None) -> int | None:
    """An answer's duration as the chat page shows it: its run's, none while it waits (milliseconds)."""
    if row.role != "assistant" or run is None or row.status == "waiting":
        return None
    return run.duration_ms


async def _sent_files(
    runtime: AgentRuntime, session_id: str, rows: list[ChatMessage]
) -> dict[str, list[str]]:
    """``message id -> attachments`` of the user messages: as stored, or for messages stored before
    they kept their files (revision 0010) from the graph state, as the chat page reads them."""
    questions = [row for row in rows if row.role == "user"]
    files = {row.id: list(row.attachments) for row in questions if row.attachments is not None}
    if len(files) == len(questions):
        return files
    try:
        sent = await sent_attachments(runtime.agent, session_id, [row.content for row in questions])
    except Exception:
        logger.exception("reading the attachments of session %s failed", session_id)
        return files
    return {row.id: files.get(row.id, found) for row, found in zip(questions, sent, strict=False)} | files


__all__ = ["ChatRejected", "router", "workspace_links"]
