"""Session management routes (spec 002, "会话与用量"): list, search, rename, pin, mode, delete, runs, context.

Every route takes the owner as ``user_name`` (query string, :data:`CurrentUser`) and
answers 404 for a session of another user, exactly as for one that does not exist.
Refusals are :class:`~ventapp.agent.refusals.ChatRejected` (JSON ``{detail, message, code}``, the
``message`` in the request's ``Accept-Language``); a refused request changes nothing.
Deleting a session clears its graph state, workspace folder and rows
(:func:`ventapp.agent.sessions.delete_session`, shared with the UI).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from ventapp.agent import sessions
from ventapp.agent.admission_checks import owned_session
from ventapp.agent.pipeline import ChatRejected
from ventapp.agent.refusals import rejected, session_not_found
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.sessions import latest_compaction
from ventapp.agent.workspace import HISTORY_AREA, HISTORY_ROUTE, area_dir
from ventapp.api.deps import CurrentUser, RuntimeDep
from ventapp.api.openapi import UtcDateTime, errors
from ventapp.db import chat_store, session_store
from ventapp.db.models import SESSION_MODES, ChatSession, ExecutionRun
from ventapp.text_rules import invisible_character

router = APIRouter(tags=["sessions"])

MAX_TITLE_CHARS = 200
MAX_QUERY_CHARS = 200
RUNS_SHOWN = 50


class SessionPublic(BaseModel):
    """A session as the API shows it. ``id`` and ``session_id`` are the same value."""

    id: str
    session_id: str
    title: str
    pinned: bool
    mode: str
    created_at: UtcDateTime
    updated_at: UtcDateTime


class SessionList(BaseModel):
    """The user's sessions, pinned first, then most recently active."""

    sessions: list[SessionPublic]


class ModePublic(BaseModel):
    """A session's permission mode: ``plan`` (plan first, for approval) or ``full``."""

    session_id: str
    mode: str


class ModeUpdate(BaseModel):
    """Body of ``PUT /api/sessions/{id}/mode``."""

    mode: str | None = None


class PinUpdate(BaseModel):
    """Body of ``PUT /api/sessions/{id}/pin``; without ``pinned`` the pin is toggled."""

    pinned: bool | None = None


class TitleUpdate(BaseModel):
    """Body of ``PUT /api/sessions/{id}/title``: 1–200 characters after trimming."""

    title: str | None = None


class Deleted(BaseModel):
    """What a ``DELETE`` removed."""

    deleted: bool
    id: str


class RunPublic(BaseModel):
    """One execution run: status (``running`` … ``interrupted``), error and timings in ms."""

    run_id: str
    kind: str
    status: str
    error: str | None
    error_code: str | None
    trace_id: str
    started_at: UtcDateTime
    finished_at: UtcDateTime | None
    duration_ms: int | None
    first_token_ms: int | None
    input_tokens: int
    output_tokens: int


class RunList(BaseModel):
    """The session's latest 50 runs, newest first."""

    session_id: str
    runs: list[RunPublic]


class Archive(BaseModel):
    """A compaction archive: evicted history the summariser wrote to ``/conversation_history/``."""

    path: str
    size: int
    modified_at: UtcDateTime


class ContextPublic(BaseModel):
    """Context use of the last answer and the compaction archives.

    ``context_tokens`` is the input of the last model call (current occupancy);
    ``input_tokens``/``output_tokens`` are that answer's billing totals; ``percent``
    is ``context_tokens / context_limit``. ``compactions`` holds the latest summarisation
    event from graph state (``{cutoff_index, file_path, summary}``), empty before any.
    """

    session_id: str
    context_tokens: int
    context_limit: int
    percent: float
    input_tokens: int
    output_tokens: int
    usage_source: str
    archives: list[Archive]
    compactions: list[dict[str, Any]]


def _busy() -> ChatRejected:
    return rejected(409, "busy", "refusal.session_busy_change")


def _canonical(session_id: str) -> str | None:
    try:
        return str(uuid.UUID(session_id))
    except ValueError:
        return None


def _public(row: ChatSession) -> SessionPublic:
    return SessionPublic(
        id=row.id,
        session_id=row.id,
        title=row.title,
        pinned=row.pinned,
        mode=row.mode,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _run_public(row: ExecutionRun) -> RunPublic:
    return RunPublic(
        run_id=row.id,
        kind=row.kind,
        status=row.status,
        error=row.error,
        error_code=row.error_code,
        trace_id=row.trace_id,
        started_at=row.started_at,
        finished_at=row.finished_at,
        duration_ms=row.duration_ms,
        first_token_ms=row.first_token_ms,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
    )


def _archives(folder: Path) -> list[Archive]:
    if not folder.is_dir():
        return []
    found = []
    for child in sorted(folder.iterdir()):
        if child.is_file() and not child.is_symlink():
            stat = child.stat()
            found.append(
                Archive(
                    path=f"{HISTORY_ROUTE}{child.name}",
                    size=stat.st_size,
                    modified_at=datetime.fromtimestamp(stat.st_mtime, UTC).replace(tzinfo=None),
                )
            )
    return found


async def _update(runtime: AgentRuntime, session_id: str, user_name: str, **changes: Any) -> SessionPublic:
    canonical = _canonical(session_id)
    row = None
    if canonical is not None:
        row = await asyncio.to_thread(
            session_store.update_session, runtime.engine, canonical, user_name, **changes
        )
    if row is None:
        raise session_not_found()
    return _public(row)


@router.get("/api/sessions", response_model=SessionList, responses=errors())
async def list_sessions(runtime: RuntimeDep, user_name: CurrentUser) -> SessionList:
    """The user's sessions, pinned first, then most recently active."""
    rows = await asyncio.to_thread(chat_store.list_sessions, runtime.engine, user_name)
    return SessionList(sessions=[_public(row) for row in rows])


@router.get("/api/sessions/search", response_model=SessionList, responses=errors())
async def search_sessions(
    runtime: RuntimeDep,
    user_name: CurrentUser,
    q: Annotated[str, Query(max_length=MAX_QUERY_CHARS)] = "",
) -> SessionList:
    """Sessions whose title contains ``q`` (case-insensitive; ``%`` and ``_`` match themselves).

    A blank ``q`` lists every session, like ``GET /api/sessions``.
    """
    query = q.strip()
    if not query:
        return await list_sessions(runtime, user_name)
    rows = await asyncio.to_thread(session_store.search_sessions, runtime.engine, user_name, query)
    return SessionList(sessions=[_public(row) for row in rows])


@router.delete(
    "/api/sessions/{session_id}", response_model=Deleted, responses=errors(404, 409, state_changing=True)
)
async def delete_session(session_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> Deleted:
    """Delete a session: its graph state, its workspace files, then its messages and runs.

    409 while the session is answering (stop it first); 404 if it is not the user's.
    """
    try:
        deleted = await sessions.delete_session(runtime, session_id, user_name)
    except sessions.SessionBusy:
        raise _busy() from None
    if not deleted:
        raise session_not_found()
    return Deleted(deleted=True, id=str(uuid.UUID(session_id)))


@router.delete(
    "/api/messages/{message_id}", response_model=Deleted, responses=errors(404, 409, state_changing=True)
)
async def delete_message(message_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> Deleted:
    """Delete one stored message of the user's session (the agent's memory keeps its graph state).

    404 if the message is missing or in another user's session; 409 while its session is answering.
    """
    message = await asyncio.to_thread(session_store.get_owned_message, runtime.engine, message_id, user_name)
    if message is None:
        raise rejected(404, "not_found", "refusal.message_not_found")
    if runtime.session_lock(message.session_id).locked() or await runtime.coordination.session_busy(
        message.session_id
    ):
        raise _busy()
    await asyncio.to_thread(session_store.delete_message, runtime.engine, message_id, user_name)
    return Deleted(deleted=True, id=message_id)


@router.get("/api/sessions/{session_id}/mode", response_model=ModePublic, responses=errors(404))
async def get_mode(session_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> ModePublic:
    """The session's permission mode."""
    session = await owned_session(runtime, session_id, user_name)
    return ModePublic(session_id=session.id, mode=session.mode)


@router.put(
    "/api/sessions/{session_id}/mode", response_model=ModePublic, responses=errors(404, state_changing=True)
)
async def set_mode(
    session_id: str, runtime: RuntimeDep, user_name: CurrentUser, body: ModeUpdate | None = None
) -> ModePublic:
    """Set the mode from ``{"mode": "plan" | "full"}``; 422 for anything else."""
    mode = body.mode if body is not None else None
    if mode not in SESSION_MODES:
        raise rejected(422, "bad_request", "refusal.mode")
    updated = await _update(runtime, session_id, user_name, mode=mode)
    return ModePublic(session_id=updated.id, mode=updated.mode)


@router.put(
    "/api/sessions/{session_id}/pin", response_model=SessionPublic, responses=errors(404, state_changing=True)
)
async def set_pin(
    session_id: str, runtime: RuntimeDep, user_name: CurrentUser, body: PinUpdate | None = None
) -> SessionPublic:
    """Pin or unpin from ``{"pinned": true | false}``; with no ``pinned`` the pin is toggled."""
    pinned = body.pinned if body is not None else None
    if pinned is None:
        session = await owned_session(runtime, session_id, user_name)
        pinned = not session.pinned
    return await _update(runtime, session_id, user_name, pinned=pinned)


@router.put(
    "/api/sessions/{session_id}/title",
    response_model=SessionPublic,
    responses=errors(404, state_changing=True),
)
async def set_title(
    session_id: str, runtime: RuntimeDep, user_name: CurrentUser, body: TitleUpdate | None = None
) -> SessionPublic:
    """Rename from ``{"title": "..."}``: blanks trimmed and folded; 422 unless 1–200 characters remain,
    400 when it holds control or invisible characters (bidi overrides, zero-width, NUL)."""
    raw = body.title if body is not None and body.title is not None else ""
    title = " ".join(raw.split())
    if not 1 <= len(title) <= MAX_TITLE_CHARS:
        raise rejected(422, "bad_request", "refusal.title_length", limit=MAX_TITLE_CHARS)
    if invisible_character(title) is not None:  # "报告\u202egpj.exe" would show as "报告exe.jpg"
        raise rejected(400, "bad_request", "refusal.title_invisible")
    return await _update(runtime, session_id, user_name, title=title)


@router.get("/api/sessions/{session_id}/runs", response_model=RunList, responses=errors(404))
async def list_runs(session_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> RunList:
    """The latest 50 runs of the session, newest first: status, error and timings."""
    session = await owned_session(runtime, session_id, user_name)
    rows = await asyncio.to_thread(session_store.list_runs, runtime.engine, session.id, RUNS_SHOWN)
    return RunList(session_id=session.id, runs=[_run_public(row) for row in rows])


@router.get("/api/sessions/{session_id}/context", response_model=ContextPublic, responses=errors(404))
async def context(session_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> ContextPublic:
    """Context use of the last answer (from its stored usage) and the compaction archives."""
    session = await owned_session(runtime, session_id, user_name)
    usage = await asyncio.to_thread(session_store.last_assistant_usage, runtime.engine, session.id)
    folder = area_dir(runtime.settings.workspaces_dir, user_name, session.id, HISTORY_AREA)
    archives = await asyncio.to_thread(_archives, folder)
    context_tokens = int(usage.get("context_tokens") or 0)
    limit = int(usage.get("context_limit") or runtime.settings.context_limit)
    return ContextPublic(
        session_id=session.id,
        context_tokens=context_tokens,
        context_limit=limit,
        percent=round(100 * context_tokens / limit, 1) if limit else 0.0,
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        usage_source=str(usage.get("usage_source") or "none"),
        archives=archives,
        compactions=await latest_compaction(runtime, session.id),
    )
