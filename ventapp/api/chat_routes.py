"""``POST /api/chat`` (the 1.5 SSE contract, spec 002) and ``GET /api/chat/history/{id}``.

Thin handlers: admission, streaming and finalisation live in ``ventapp.agent.pipeline``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import StreamingResponse

from ventapp.agent.pipeline import ChatRejected, ChatRequest, owned_session, start_chat, stop_run
from ventapp.agent.prefixes import apply_prefixes
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.uploads import UploadRejected, discard_upload, save_upload
from ventapp.api.deps import CurrentUser, RuntimeDep
from ventapp.api.sse import stream_run
from ventapp.db import chat_store

router = APIRouter(prefix="/api/chat", tags=["chat"])


async def _prepare_turn(runtime: AgentRuntime, request: ChatRequest, file: UploadFile | None) -> ChatRequest:
    """Apply the message prefixes and save the attached file: the request to admit.

    ``#skill:<name>`` must name an installed skill (else 400 before anything runs);
    ``#session:<uuid>`` continues that session under the usual ownership rule. The file
    is checked first and saved into the session's ``/workspace/uploads/`` (a new session
    gets its id here); the caller discards it if admission then refuses the turn.

    Raises:
        ChatRejected: 400 unknown skill, ``#session:`` conflicting with ``session_id``,
            empty or badly named file; 404 ``#session:`` without an id; 413 file too large.
    """
    request = apply_prefixes(request)
    session_id = request.session_id
    new_session = request.new_session
    attachments = list(request.attachments)
    if file is not None and (file.filename or file.size):  # browsers send an empty part for "no file"
        data = await file.read(runtime.settings.upload_max_bytes + 1)
        if not session_id:  # the file needs its session folder before admission
            session_id, new_session = str(uuid.uuid4()), True
        try:
            path = await asyncio.to_thread(
                save_upload, runtime.settings, request.user_name, session_id, file.filename, data
            )
        except UploadRejected as exc:
            raise ChatRejected(exc.status, exc.code, exc.message) from None
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


@router.post("", response_class=StreamingResponse)
async def chat(
    http_request: Request,
    runtime: RuntimeDep,
    message: Annotated[str | None, Form()] = None,
    session_id: Annotated[str | None, Form()] = None,
    thread_id: Annotated[str | None, Form()] = None,
    mode: Annotated[str | None, Form()] = None,
    user_name: Annotated[str, Form()] = "default",
    request_id: Annotated[str | None, Form()] = None,
    file: Annotated[UploadFile | None, File()] = None,
) -> StreamingResponse:
    """Run one chat turn and stream its contract events as SSE.

    Multipart fields per spec 002; ``message`` may start with ``#skill:<name>`` and/or
    ``#session:<uuid>``, and ``file`` is saved to ``/workspace/uploads/``. Errors before the
    stream starts are JSON: 400 (blank message, unknown skill, bad upload), 404 (unknown or
    foreign session, thread_id ≠ session_id), 409 (session busy), 413 (upload too large),
    422 (bad mode). Failures after it starts are ``error`` frames.
    """
    if http_request.headers.get("content-type", "").startswith("application/json"):
        raise ChatRejected(
            415,
            "bad_request",
            "POST /api/chat takes multipart/form-data fields (message, session_id, …), not JSON.",
        )
    if request_id is None and "request_id" in await http_request.form():
        # FastAPI turns an empty form value into None; an explicitly empty key is a client bug.
        request_id = ""
    request = ChatRequest(
        message=message or "",
        user_name=(user_name or "default").strip(),
        session_id=session_id or None,
        thread_id=thread_id or None,
        mode=mode or None,
        request_id=request_id,
    )
    request = await _prepare_turn(runtime, request, file)
    try:
        run = await start_chat(runtime, request)
    except ChatRejected:
        await _discard_uploads(runtime, request)  # a refused turn leaves nothing behind
        raise

    return stream_run(run)


@router.post("/stop")
async def stop(
    runtime: RuntimeDep,
    session_id: Annotated[str, Form()],
    user_name: Annotated[str, Form()] = "default",
) -> Any:
    """Stop the session's running answer: ``{"stopped": bool}``; 404 if not the user's session.

    The stream of that run ends with an ``error`` frame (code ``cancelled``); its partial
    answer is saved with a marker and the run is recorded as ``cancelled``.
    """
    return {"stopped": await stop_run(runtime, session_id, (user_name or "default").strip())}


@router.get("/history/{session_id}")
async def history(session_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> Any:
    """The session's messages in order: ``{session_id, title, messages: [...]}``; 404 if not the user's."""
    session = await owned_session(runtime, session_id, user_name)
    rows = await asyncio.to_thread(chat_store.list_messages, runtime.engine, session.id)
    return {
        "session_id": session.id,
        "title": session.title,
        "mode": session.mode,
        "messages": [
            {
                "id": row.id,
                "role": row.role,
                "content": row.content,
                "tool_calls": row.tool_calls,
                "citations": row.citations,
                "usage": row.usage,
                "status": row.status,
                "run_id": row.run_id,
                "created_at": row.created_at.isoformat(),
            }
            for row in rows
        ],
    }


__all__ = ["ChatRejected", "router"]
