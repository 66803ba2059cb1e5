"""The chat page's state: transcript, the answer being streamed, sessions, user name.

The open session is also in the address bar (``/?session=<id>``, see
:func:`session_url_script`), so a reload reopens it. The sidebar's own actions
(search, rename, pin, delete, mode, attachments) live in
:mod:`ventapp.state.sessions_state`.

Streaming rules (DESIGN.md, "UI streaming"):

* :meth:`ChatState.send` is quick: it appends the user's bubble, sets ``is_streaming``
  and chains into the background :meth:`ChatState.run_agent`;
* ``run_agent`` runs the pipeline (:func:`ventapp.agent.pipeline.start_chat`) and feeds
  its events through :func:`ventapp.state.live_answer.pump`, which flushes batched
  changes into the ``live_*`` vars; only changed vars are assigned, so a text flush
  sends ``live_text`` and nothing else;
* ``messages`` (the finished transcript) is never touched while a run streams: the
  finished answer is appended once, at the end, in ``finally``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import uuid
from typing import Any

import reflex as rx

from ventapp.agent.pipeline import MAX_USER_NAME_CHARS, ChatRejected, ChatRequest, start_chat
from ventapp.agent.prefixes import apply_prefixes
from ventapp.agent.runtime import AgentRuntime, get_runtime
from ventapp.agent.uploads import discard_upload
from ventapp.config import Settings, get_settings
from ventapp.db import chat_store, session_store
from ventapp.state.live_answer import LiveAnswer, changed_fields, failed_answer, pump, to_message
from ventapp.state.views import (
    ChatMessageView,
    CitationView,
    SessionView,
    TodoView,
    ToolCardView,
    message_from_row,
    session_from_row,
)

logger = logging.getLogger(__name__)

NOT_READY = "The agent is still starting up. Try again in a moment."
UI_FAILURE = "Something went wrong while showing this answer. The error has been logged."
THINKING = "正在思考…"

LIVE_VARS: dict[str, str] = {
    "text": "live_text",
    "reasoning": "live_reasoning",
    "status": "live_status",
    "tools": "live_tools",
    "todos": "live_todos",
    "citations": "live_citations",
    "notice": "live_notice",
}
"""``LiveAnswer`` field -> the state var that shows it while the run streams."""
LIST_LIVE_VARS = frozenset({"live_tools", "live_todos", "live_citations"})


def _runtime() -> AgentRuntime | None:
    try:
        return get_runtime()
    except RuntimeError:
        return None


def _settings() -> Settings:
    runtime = _runtime()
    return runtime.settings if runtime is not None else get_settings()


def clean_user_name(raw: str) -> tuple[str, str]:
    """Normalise a typed user name.

    Returns:
        ``(name, "")`` when valid (inner whitespace folded to single spaces), else
        ``("", sentence explaining what to fix)``.
    """
    name = " ".join(str(raw or "").split())
    if not name:
        return "", "Enter a name so your conversations can be found again."
    if len(name) > MAX_USER_NAME_CHARS:
        return "", f"Use at most {MAX_USER_NAME_CHARS} characters."
    return name, ""


def apply_live(state: Any, before: LiveAnswer, after: LiveAnswer) -> None:
    """Assign the ``live_*`` vars whose ``LiveAnswer`` field changed (call inside ``async with``)."""
    for name in changed_fields(before, after):
        var = LIVE_VARS.get(name)
        if var is None:
            continue
        value = getattr(after, name)
        setattr(state, var, list(value) if isinstance(value, tuple) else value)


async def load_sessions(user_name: str) -> list[SessionView]:
    """The user's past sessions for the sidebar (empty before the runtime is open)."""
    runtime = _runtime()
    if runtime is None or not user_name:
        return []
    rows = await asyncio.to_thread(chat_store.list_sessions, runtime.engine, user_name)
    return [session_from_row(row) for row in rows]


async def load_session(session_id: str, user_name: str) -> tuple[list[ChatMessageView], str] | None:
    """The stored transcript and mode of one of the user's sessions; None if it is not theirs."""
    runtime = _runtime()
    if runtime is None or not session_id:
        return None
    try:
        session_id = str(uuid.UUID(session_id))
    except ValueError:
        return None
    session = await asyncio.to_thread(session_store.get_owned_session, runtime.engine, session_id, user_name)
    if session is None:
        return None
    rows = await asyncio.to_thread(chat_store.list_messages, runtime.engine, session_id)
    return [message_from_row(row) for row in rows], session.mode


def session_url_script(session_id: str) -> Any:
    """Show the open session in the address bar (``/?session=<id>``; ``""`` = a new chat), no reload."""
    query = f"?session={session_id}" if session_id else ""
    return rx.call_script(
        f"window.history.replaceState(null, '', window.location.pathname + {json.dumps(query)})"
    )


async def discard_attachments(user_name: str, session_id: str, paths: list[str]) -> None:
    """Delete uploaded files that were never sent (the chat they were for was left)."""
    runtime = _runtime()
    if runtime is None or not session_id:
        return
    for path in paths:
        await asyncio.to_thread(discard_upload, runtime.settings, user_name, session_id, path)


async def run_turn(
    state: Any,
    message: str,
    user_name: str,
    session_id: str | None,
    *,
    attachments: list[str] | None = None,
    mode: str | None = None,
) -> LiveAnswer:
    """Admit and stream one turn, flushing into ``state``; return the final answer.

    ``state`` is the background task's proxy. The message's ``#skill:`` / ``#session:``
    prefixes apply as in the API. Failures come back as an answer with ``error`` set
    (shown in the bubble), never as an exception.
    """
    runtime = _runtime()
    if runtime is None:
        return failed_answer(NOT_READY)
    request = ChatRequest(
        message=message,
        user_name=user_name,
        session_id=session_id,
        attachments=list(attachments or []),
        mode=mode,
    )
    try:
        run = await start_chat(runtime, apply_prefixes(request))
    except ChatRejected as exc:
        if request.attachments:  # nothing ran: the files wait for the next message
            async with state:
                state.attachments = [*request.attachments, *state.attachments]
        return failed_answer(exc.message, exc.code)
    shown = LiveAnswer(status=THINKING)  # what `_begin` already shows

    async def on_flush(before: LiveAnswer, after: LiveAnswer) -> None:
        nonlocal shown
        async with state:
            apply_live(state, before, after)
        shown = after

    try:
        async with state:
            state.session_id = run.session_id
        return await pump(run.events(), on_flush, live=shown)
    except Exception:
        logger.exception("showing run %s (trace %s) failed", run.run_id, run.trace_id)
        return dataclasses.replace(shown, status="", error=UI_FAILURE, error_code="internal")
    finally:
        run.release()


class ChatState(rx.State):
    """State of the chat page (route ``/``)."""

    user_name: str = rx.LocalStorage("", name="ventagent_user_name", sync=True)
    """Who is chatting; kept in the browser, sent as the pipeline's ``user_name``."""
    name_dialog_open: bool = False
    name_error: str = ""

    messages: list[ChatMessageView] = []
    """The finished transcript; not modified while a run streams."""
    session_id: str = ""
    """The current session ("" until the first answer starts); follow-ups continue it."""
    sessions: list[SessionView] = []
    mode: str = "full"
    """The open session's mode (``full`` | ``plan``); for a new chat, the mode it will start in."""
    attachments: list[str] = []
    """Virtual paths of files uploaded for the next message (``/workspace/uploads/<name>``)."""
    draft_session_id: str = ""
    """The id a new chat will get: set when a file is attached before the first message."""

    is_streaming: bool = False
    live_text: str = ""
    live_reasoning: str = ""
    live_status: str = ""
    live_tools: list[ToolCardView] = []
    live_todos: list[TodoView] = []
    live_citations: list[CitationView] = []
    live_notice: str = ""

    model_name: str = ""
    demo_mode: bool = False
    model_configured: bool = True

    _pending_message: str = ""
    _pending_attachments: list[str] = []

    def _reset_live(self) -> None:
        # Assign only what is not empty yet: every assignment is re-sent in the next delta.
        for var in LIVE_VARS.values():
            if getattr(self, var):
                setattr(self, var, [] if var in LIST_LIVE_VARS else "")

    def _show_session(self, session_id: str, loaded: tuple[list[ChatMessageView], str] | None) -> None:
        messages, mode = loaded or ([], "full")
        self.messages = messages
        self.session_id = session_id if loaded is not None else ""
        self.mode = mode
        self._reset_live()

    async def _leave_drafts(self) -> None:
        """Drop unsent attachments (and their files) before another chat is shown."""
        if self.attachments:
            await discard_attachments(
                self.user_name, self.session_id or self.draft_session_id, self.attachments
            )
            self.attachments = []
        self.draft_session_id = ""

    @rx.event
    async def load_page(self) -> Any:
        """On load: model facts, the user's sessions, and the session named in the URL (or the tab's)."""
        settings = _settings()
        self.model_name = settings.model_name
        self.demo_mode = settings.demo_mode
        self.model_configured = settings.model_configured
        if not self.user_name:
            return None
        self.sessions = await load_sessions(self.user_name)
        if self.is_streaming:
            return None
        wanted = self.router.url.query_parameters.get("session", "") or self.session_id
        if wanted and (wanted != self.session_id or not self.messages):
            await self._leave_drafts()
            self._show_session(wanted, await load_session(wanted, self.user_name))
        return session_url_script(self.session_id)

    def _begin(self, text: str) -> Any:
        text = (text or "").strip()
        if not text or self.is_streaming:
            return None
        if not self.user_name:
            self.name_dialog_open = True
            return None
        self.messages.append(ChatMessageView(id=uuid.uuid4().hex, role="user", content=text))
        self._pending_message = text
        self._pending_attachments, self.attachments = list(self.attachments), []
        self._reset_live()
        self.live_status = THINKING
        self.is_streaming = True
        return ChatState.run_agent

    @rx.event
    def send(self, form_data: dict[str, Any]) -> Any:
        """Submit of the composer form (field ``message``)."""
        return self._begin(str(form_data.get("message") or ""))

    @rx.event
    def send_suggestion(self, text: str) -> Any:
        """Send one of the empty-state suggestions."""
        return self._begin(text)

    @rx.event(background=True)
    async def run_agent(self) -> Any:
        """Stream the pending message's answer; append it to the transcript at the end."""
        async with self:
            message, self._pending_message = self._pending_message, ""
            attachments, self._pending_attachments = self._pending_attachments, []
            user_name, mode = self.user_name, self.mode
            session_id = self.session_id or self.draft_session_id or None
        final = failed_answer(UI_FAILURE)
        sessions: list[SessionView] | None = None
        try:
            final = await run_turn(self, message, user_name, session_id, attachments=attachments, mode=mode)
            sessions = await load_sessions(user_name)  # the new session's title shows in the list
        except Exception:
            logger.exception("chat turn failed outside the run pipeline")
        finally:
            async with self:
                self.messages.append(to_message(final))
                self._reset_live()
                self.is_streaming = False
                if self.session_id:
                    self.draft_session_id = ""
                if sessions is not None and self.user_name == user_name:
                    self.sessions = sessions
                shown = self.session_id
        return session_url_script(shown)

    @rx.event
    async def new_chat(self) -> Any:
        """Start an empty conversation (the next message opens a new session)."""
        if self.is_streaming:
            return None
        await self._leave_drafts()
        self._show_session("", None)
        return session_url_script("")

    @rx.event
    async def open_session(self, session_id: str) -> Any:
        """Show a past session from the sidebar and continue it."""
        if self.is_streaming or session_id == self.session_id:
            return None
        loaded = await load_session(session_id, self.user_name)
        if loaded is None:
            return None
        await self._leave_drafts()
        self._show_session(session_id, loaded)
        return session_url_script(session_id)

    @rx.event
    def open_name_dialog(self) -> None:
        self.name_error = ""
        self.name_dialog_open = True

    @rx.event
    def close_name_dialog(self) -> None:
        """Close the dialog, unless no name has been saved yet (the first visit must set one)."""
        if self.user_name:
            self.name_dialog_open = False
            self.name_error = ""

    @rx.event
    def on_name_dialog_change(self, is_open: bool) -> None:
        """Escape / outside click on the dialog."""
        if is_open:
            self.name_dialog_open = True
        elif self.user_name:
            self.name_dialog_open = False
            self.name_error = ""

    @rx.event
    async def save_user_name(self, form_data: dict[str, Any]) -> Any:
        """Keep the typed name; a different name starts over with that person's sessions."""
        name, problem = clean_user_name(str(form_data.get("user_name") or ""))
        if problem:
            self.name_error = problem
            return None
        self.name_error = ""
        self.name_dialog_open = False
        if name == self.user_name:
            return None
        if not self.is_streaming:
            await self._leave_drafts()
            self._show_session("", None)
        self.user_name = name
        self.sessions = await load_sessions(name)
        return session_url_script(self.session_id)
