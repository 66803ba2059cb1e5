"""The sidebar's state and the open session's settings: search, rename, pin, delete, mode, attachments.

A sibling of :class:`~ventapp.state.chat_state.ChatState`: it reads and changes the chat
(open session, session list, attachments) through ``get_state(ChatState)``. Like the
chat, it calls the stores and the agent layer directly, never our HTTP API; deleting
goes through :func:`ventapp.agent.sessions.delete_session`, the same function the API uses.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import reflex as rx

from ventapp.agent import sessions
from ventapp.agent.runtime import AgentRuntime, get_runtime
from ventapp.agent.uploads import UploadRejected, save_upload
from ventapp.db import session_store
from ventapp.db.models import SESSION_MODES
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.state import turns
from ventapp.state.chat_data import discard_attachments, load_sessions, session_url_script
from ventapp.state.chat_state import ChatState
from ventapp.state.turns import NOT_READY
from ventapp.state.ui_identity import came_from, login_gone, to_login
from ventapp.state.upload_words import UploadProblem, refused_upload, too_large
from ventapp.state.views import SessionView, session_from_row
from ventapp.text_rules import without_invisible

logger = logging.getLogger(__name__)

MAX_TITLE_CHARS = 200
UPLOAD_ID = "attach"
"""``rx.upload`` id of the attach button."""
DROP_ID = "composer-drop"
STOP_WAIT_S = 20.0
"""How long "Stop and delete" waits for the stopped run to end (it saves its partial answer first)."""
STOP_POLL_S = 0.2
"""The composer is a drop zone too: files dropped on it are attached like picked ones."""


def _runtime() -> AgentRuntime | None:
    try:
        return get_runtime()
    except RuntimeError:
        return None


def clean_title(raw: str, lang: str = DEFAULT_LANG) -> tuple[str, str]:
    """A typed title with blanks trimmed and folded and invisible characters dropped (the API refuses
    them; here the title kept is the one the box showed): ``(title, "")``, or ``("", problem in lang)``."""
    title = " ".join(without_invisible(" ".join(str(raw or "").split())).split())
    if not title:
        return "", t("sidebar.title_empty", lang)
    if len(title) > MAX_TITLE_CHARS:
        return "", t("sidebar.title_too_long", lang, max=MAX_TITLE_CHARS)
    return title, ""


def upload_problem(refused: UploadRejected, limit_bytes: int, lang: str = DEFAULT_LANG) -> str:
    """Why an attachment was refused, in ``lang``: the size limit in KB/MB, or what is wrong with the file."""
    return refused_upload(refused, limit_bytes).words(lang)


async def search_sessions(user_name: str, query: str, lang: str = DEFAULT_LANG) -> list[SessionView]:
    """The user's sessions whose title contains ``query`` (case-insensitive), dated in ``lang``."""
    runtime = _runtime()
    if runtime is None or not user_name:
        return []
    rows = await asyncio.to_thread(session_store.search_sessions, runtime.engine, user_name, query)
    return [session_from_row(row, lang) for row in rows]


class SessionsState(rx.State):
    """Sidebar search, the rename and delete dialogs, the mode switch and the attach button."""

    search_query: str = ""
    search_results: list[SessionView] = []
    history_open: bool = False
    """The phone layout's conversation drawer is open."""
    rename_id: str = ""
    rename_value: str = ""
    rename_error: str = ""
    delete_id: str = ""
    delete_title: str = ""
    delete_running: bool = False
    """The session in the delete dialog is answering: the dialog says so, and deleting stops it first."""
    _delete_after_stop: str = ""
    """The session "Stop and delete" stopped, deleted once its run has ended (:meth:`delete_when_stopped`)."""
    _gone_user: str = ""
    """Whose login :meth:`_acting` found gone (the chat's name is cleared by then)."""
    uploading: bool = False

    async def _chat(self) -> ChatState:
        return await self.get_state(ChatState)

    async def _acting(self) -> ChatState | None:
        """The chat, or None (the chat cleared; the caller returns :meth:`_to_login`) when this
        tab's login ended on the server."""
        chat = await self._chat()
        if await login_gone(self, chat.user_name):
            self._gone_user = chat.user_name
            chat.reset()
            return None
        return chat

    def _to_login(self) -> Any:
        """The trip to ``/login`` after :meth:`_acting` found the login gone, keeping the chat box's
        draft for the user whose login it was — as Send does (:func:`to_login`)."""
        user_name, self._gone_user = self._gone_user, ""
        return to_login(came_from(self), user_name)

    async def _refresh(self, chat: ChatState) -> None:
        chat.sessions = await load_sessions(chat.user_name, chat.lang)
        if self.search_query:
            self.search_results = await search_sessions(chat.user_name, self.search_query, chat.lang)

    @rx.event
    def set_history_open(self, value: bool) -> None:
        """Open or close the phone layout's conversation drawer."""
        self.history_open = value

    @rx.event
    async def set_search(self, query: str) -> Any:
        """Filter the sidebar by title as the user types (blank shows every session)."""
        self.search_query = query.strip()[:MAX_TITLE_CHARS]
        if (chat := await self._acting()) is None:
            return self._to_login()
        self.search_results = (
            await search_sessions(chat.user_name, self.search_query, chat.lang) if self.search_query else []
        )

    @rx.event
    async def toggle_pin(self, session_id: str, pinned: bool) -> Any:
        """Pin a session to the top of the list, or unpin it."""
        if (chat := await self._acting()) is None:
            return self._to_login()
        runtime = _runtime()
        if runtime is None:
            return None
        await asyncio.to_thread(
            session_store.update_session, runtime.engine, session_id, chat.user_name, pinned=not pinned
        )
        await self._refresh(chat)

    @rx.event
    def start_rename(self, session_id: str, title: str) -> None:
        """Open the rename dialog for a session."""
        self.rename_id, self.rename_value, self.rename_error = session_id, title, ""

    @rx.event
    def cancel_rename(self) -> None:
        """Close the rename dialog without saving."""
        self.rename_id = ""

    @rx.event
    def on_rename_open_change(self, is_open: bool) -> None:
        """Escape or a click outside closes the rename dialog without saving."""
        if not is_open:
            self.rename_id = ""

    @rx.event
    async def save_rename(self, form_data: dict[str, Any]) -> Any:
        """Save the title typed in the rename dialog (1–200 characters after trimming)."""
        if (chat := await self._acting()) is None:
            return self._to_login()
        title, problem = clean_title(str(form_data.get("title") or ""), chat.lang)
        if problem:
            self.rename_error = problem
            return None
        runtime = _runtime()
        if runtime is not None and self.rename_id:
            await asyncio.to_thread(
                session_store.update_session, runtime.engine, self.rename_id, chat.user_name, title=title
            )
        self.rename_id = ""
        await self._refresh(chat)

    @rx.event
    async def ask_delete(self, session_id: str, title: str) -> None:
        """Open the confirmation dialog before deleting a session; it says so up front when it is answering.

        As in Open WebUI or LibreChat, a running conversation can be deleted: the dialog's button is
        then "Stop and delete" (the API's rule holds: a session is never deleted while it runs;
        the UI stops it first, as ``POST /api/chat/stop`` would).
        """
        self.delete_id, self.delete_title = session_id, title
        chat = await self._chat()
        running = chat.is_streaming and chat.session_id == session_id
        self.delete_running = running or await turns.is_running(session_id, chat.user_name)

    @rx.event
    def cancel_delete(self) -> None:
        """Close the confirmation dialog; nothing is deleted."""
        self.delete_id = ""

    @rx.event
    def on_delete_open_change(self, is_open: bool) -> None:
        """Escape closes the confirmation dialog; nothing is deleted."""
        if not is_open:
            self.delete_id = ""

    @rx.event
    async def confirm_delete(self) -> Any:
        """Delete the session everywhere (graph state, files, rows); leave it if it was open."""
        session_id, self.delete_id = self.delete_id, ""
        if (chat := await self._acting()) is None:
            return self._to_login()
        runtime = _runtime()
        if runtime is None or not session_id:
            return None
        self.delete_running = False
        try:
            await sessions.delete_session(runtime, session_id, chat.user_name)
        except sessions.SessionBusy:  # answering (perhaps since the dialog opened): stop it first
            await turns.stop_turn(session_id, chat.user_name)
            self._delete_after_stop = session_id
            return SessionsState.delete_when_stopped
        except OSError:
            logger.exception("deleting the files of session %s failed", session_id)
            return rx.toast.error(t("sidebar.delete_failed", chat.lang))
        return await self._deleted(chat, session_id)

    async def _deleted(self, chat: ChatState, session_id: str) -> Any:
        """After a delete: the list again; leave the session if it was open."""
        await self._refresh(chat)
        if chat.session_id == session_id:
            chat._show_session("", None)  # also drops its live answer and any pending card
            return session_url_script("")
        return None

    @rx.event(background=True)
    async def delete_when_stopped(self) -> Any:
        """Delete the session "Stop and delete" stopped, once its run has ended and this tab showed its end."""
        async with self:
            session_id, self._delete_after_stop = self._delete_after_stop, ""
            chat = await self._chat()
            user_name, lang = chat.user_name, chat.lang
        runtime = _runtime()
        if runtime is None or not session_id:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_WAIT_S
        while True:
            async with self:
                chat = await self._chat()
                shown_live = chat.is_streaming and chat.session_id == session_id
            if not shown_live:  # else this tab's follower still commits the stopped answer
                try:
                    await sessions.delete_session(runtime, session_id, user_name)
                    break
                except sessions.SessionBusy:
                    pass
                except OSError:
                    logger.exception("deleting the files of session %s failed", session_id)
                    yield rx.toast.error(t("sidebar.delete_failed", lang))
                    return
            if loop.time() >= deadline:
                yield rx.toast.error(t("sidebar.delete_stop_slow", lang))
                return
            await asyncio.sleep(STOP_POLL_S)
        async with self:
            event = await self._deleted(await self._chat(), session_id)
        if event is not None:
            yield event

    @rx.event
    async def set_mode(self, mode: str | list[str]) -> Any:
        """Switch the open session (or the next new chat) between ``plan`` and ``full``."""
        mode = mode[0] if isinstance(mode, list) and mode else mode
        if mode not in SESSION_MODES:
            return None
        if (chat := await self._acting()) is None:
            return self._to_login()
        chat.mode = str(mode)
        runtime = _runtime()
        if runtime is not None and chat.session_id:
            await asyncio.to_thread(
                session_store.update_session, runtime.engine, chat.session_id, chat.user_name, mode=mode
            )

    @rx.event
    async def handle_upload(self, files: list[rx.UploadFile]) -> Any:
        """Save the picked file into the open session's ``/workspace/uploads/``; the next message names it.

        Before the first message of a new chat the session gets its id here (``draft_session_id``).
        """
        if not files:  # all refused in the browser: refuse_drop says why
            return None
        if (chat := await self._acting()) is None:
            return self._to_login()
        runtime = _runtime()
        # No clearing here: refuse_drop, sent with this drop, said why its other files were refused
        # (and may have arrived first); :meth:`drop_started` cleared the last drop's sentence.
        if runtime is None:
            chat.show_upload_problem(UploadProblem(NOT_READY))
            return None
        if not chat.user_name:
            chat.name_dialog_open = True
            return None
        if not chat.session_id and not chat.draft_session_id:
            chat.draft_session_id = str(uuid.uuid4())
        session_id = chat.session_id or chat.draft_session_id
        limit = runtime.settings.upload_max_bytes
        for upload in files:
            data = await asyncio.to_thread(upload.file.read, limit + 1)
            try:
                path = await asyncio.to_thread(
                    save_upload, runtime.settings, chat.user_name, session_id, upload.name, data
                )
            except UploadRejected as exc:
                chat.show_upload_problem(refused_upload(exc, limit))
                continue
            if path not in chat.attachments:
                chat.attachments.append(path)

    @rx.event
    async def drop_started(self) -> Any:
        """Files were picked or dropped: the last drop's refusal goes (first of the zone's ``on_drop``).

        Sent over the websocket before :meth:`refuse_drop` of the same drop, so that its sentence
        stays while :meth:`handle_upload` (its own request, which may arrive later) attaches the rest.
        """
        if (chat := await self._acting()) is None:
            return self._to_login()
        chat.upload_error = ""
        return None

    @rx.event
    async def refuse_drop(self, codes: list[str]) -> Any:
        """The browser refused files before sending them (``rx.upload``'s ``on_drop_rejected``).

        Args:
            codes: react-dropzone's error codes of the refused files (only the codes: the files
                themselves stay in the browser); the only refusal the upload zones ask for is
                ``file-too-large`` (over ``ChatState.upload_max_bytes``), worded like the server's
                (:func:`upload_problem`).
        """
        if (chat := await self._acting()) is None:
            return self._to_login()
        if "file-too-large" in codes:
            chat.show_upload_problem(too_large(chat.upload_max_bytes))
        return None

    @rx.event
    async def remove_attachment(self, path: str) -> Any:
        """Take a file off the next message and delete it (it was never sent)."""
        if (chat := await self._acting()) is None:
            return self._to_login()
        if path in chat.attachments:
            chat.attachments.remove(path)
            await discard_attachments(chat.user_name, chat.session_id or chat.draft_session_id, [path])
