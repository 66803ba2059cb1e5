"""The chat page's state: transcript, the answer being streamed, sessions, user name.

The open session is also in the address bar (``/?session=<id>``), so a reload reopens it. The
sidebar's own actions (search, rename, pin, delete, mode, attachments) live in
:mod:`ventapp.state.sessions_state`.

Streaming rules (DESIGN.md, "UI streaming"; issues 11 and 18):

* :meth:`ChatState.send` is quick: it appends the user's bubble, sets ``is_streaming``
  and chains into the background :meth:`ChatState.run_agent`;
* ``run_agent`` admits the turn, runs it on its own task (:func:`turns.start`: closing the tab
  is no Stop), lists the new session at once, and follows the run from its log
  (:class:`turns.Follower`) like any tab opening the session meanwhile (``follow_live``);
* the ``live_*`` vars get only what changed; the answer's text goes to the browser as
  small ``add`` events (:mod:`ventapp.state.live_text`), never as a growing state var
  (the live bubble, its following and its end: :mod:`ventapp.state.live_bubble`);
* ``messages`` (the transcript) is untouched while a run streams: the answer is appended once.

Opening a session (load, reload, sidebar, back/forward) reads it afresh and follows a live run;
what other tabs did to it meanwhile shows when this one sends or gets the focus back
(:mod:`ventapp.state.other_tabs`).

Approvals, questions and plans: a paused run keeps its bubble (``live_*``) with a card
(``interrupt``, :mod:`ventapp.state.interrupt_view`) whose answer chains into
:meth:`ChatState.resume_agent`, streaming into the *same* bubble; a reload gets the card back
(:func:`ventapp.state.turns.load_interrupt`). Stop: :meth:`ChatState.stop`, in any tab.

Every action taken as the user first checks the login is still live on the server
(:func:`~ventapp.state.ui_identity.login_gone`): otherwise the tab is cleared and sent to
``/login``, and nothing runs.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import reflex as rx

from ventapp.config import Settings, get_settings
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.state import turns, usage_words
from ventapp.state.card_answers import CardAnswers
from ventapp.state.chat_controls import ChatControls, attachments_at_turn, truncated_at_turn
from ventapp.state.chat_data import (
    clean_user_name,
    discard_attachments,
    last_context,
    load_session,
    load_sessions,
    session_url,
    session_url_script,
)
from ventapp.state.drop_confirm import DropConfirm
from ventapp.state.lang_state import ui_lang
from ventapp.state.live_answer import LiveAnswer, failed_answer, to_message
from ventapp.state.live_bubble import LiveBubble
from ventapp.state.live_text import REASONING, TEXT
from ventapp.state.model_state import ModelState
from ventapp.state.name_dialog import NameDialog
from ventapp.state.other_tabs import OtherTabs
from ventapp.state.schedules_state import HandoffState
from ventapp.state.server_view import ServerView
from ventapp.state.turns import (
    THINKING,
    UI_FAILURE,
    EndedMeanwhile,
    Follower,
    apply_live,
    current_live,
)
from ventapp.state.ui_identity import login_gone, to_login, user_name_var
from ventapp.state.upload_words import UploadProblem
from ventapp.state.views import ChatMessageView, SessionView, as_dropped
from ventapp.text_rules import without_nul

logger = logging.getLogger(__name__)

__all__ = ["ChatState", "clean_user_name", "discard_attachments", "last_context"]
__all__ += ["load_session", "load_sessions", "session_url_script"]


def _settings() -> Settings:
    runtime = turns.current_runtime()
    return runtime.settings if runtime is not None else get_settings()


SESSION_NOT_FOUND = "session-not-found"
"""The toast's id: the notice of a conversation not found replaces itself, never piles up."""


def not_found_notice(lang: str) -> Any:
    """The notice that the conversation asked for (``/?session=…``, or one deleted meanwhile) is not
    one of the user's: a new chat is shown instead (tester, 2 Dec: it was, silently)."""
    return rx.toast.warning(t("chat.session_not_found", lang), id=SESSION_NOT_FOUND, duration=10_000)


class ChatState(
    CardAnswers, ChatControls, DropConfirm, LiveBubble, NameDialog, OtherTabs, ServerView, rx.State
):
    """State of the chat page (route ``/``)."""

    user_name: str = user_name_var()
    """Who is chatting; kept in the browser, sent as the pipeline's ``user_name``."""

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
    upload_error: str = ""
    """Why the file last picked or dropped was refused; gone once a message is sent or another
    chat is shown (:meth:`_leave_drafts`)."""
    _upload_problem: UploadProblem = UploadProblem()
    """The same in no language: :meth:`relocalise` words it anew (only while ``upload_error`` shows)."""
    upload_max_bytes: int = Settings.upload_max_bytes
    """``UPLOAD_MAX_BYTES`` (read on load): the browser refuses a larger file before sending it, as
    the server's guard would answer 413 to the upload unseen (:mod:`ventapp.api.guards`)."""

    model_name: str = ""
    demo_mode: bool = False
    model_configured: bool = True
    lang: str = DEFAULT_LANG
    """The UI language server-worded text is in (footers, dates, errors): ``LangState``'s, read on
    load and on every switch (:meth:`relocalise`)."""

    _pending_message: str = ""
    _pending_fork: int = -1
    """The user turn the pending message replaces (edit, regenerate); -1 for a new one."""
    _pending_attachments: list[str] = []
    _pending_keep: list[str] = []
    """The replaced turn's files the pending edit keeps (with ``_pending_fork``)."""
    _resume_answer: dict[str, Any] = {}
    """The card's answer (``ResumeAnswer`` fields) handed to :meth:`resume_agent`."""
    _dropped_card: bool = False
    """The pending message drops the card the session waited on (the person confirmed it)."""

    @rx.var
    def context_percent(self) -> int:
        """Context occupancy after the session's last answer, 0–100 (``.context-gauge``)."""
        return usage_words.context_percent(*last_context(self.messages))

    @rx.var
    def context_label(self) -> str:
        """e.g. ``"Context: 1.1k of 128k tokens (1%)"``; ``""`` before any answer reported it."""
        return usage_words.context_label(*last_context(self.messages), self.lang)

    async def _open(self, session_id: str, show_unsent: bool = True) -> list[Any]:
        """Show a session as the server has it now, and follow its run if one is live.

        Args:
            session_id: The session.
            show_unsent: Show the tab's message the session refused, if it kept one (:meth:`_show_unsent`).

        Returns:
            Events to send: the URL, the paused answer's text, or the follower to start.
        """
        live = await turns.live_run(session_id, self.user_name)  # before the transcript: see follow_plan
        mark = await turns.session_mark(session_id)  # before it too: see OtherTabs
        loaded = await load_session(session_id, self.user_name, self.lang)
        await self._leave_drafts()
        self._show_session(session_id, loaded, mark)
        self._clear_elsewhere()
        plan = None
        if loaded is not None:
            try:
                plan = await turns.follow_plan(live, {message.id for message in self.messages})
            except EndedMeanwhile:
                mark = await turns.session_mark(session_id)
                self._show_session(
                    session_id, await load_session(session_id, self.user_name, self.lang), mark
                )
        route = ModelState.follow_session(self.session_id, self.user_name)
        if plan is None:
            card = await self._restore_interrupt()
            # Not found: a clean new chat, as the notice says (as 新对话, a reload of "/" brings a new
            # chat's refused message back; this answer does not).
            unsent = self._show_unsent() if show_unsent and loaded is not None else []
            missing = [not_found_notice(self.lang)] if loaded is None and turns.current_runtime() else []
            return [session_url_script(self.session_id), route, *card, *unsent, *missing]
        self.messages, start = turns.follow_start(self.messages, plan, self.lang)
        self._new_live()
        self._follow = {"run_id": plan.run_id, "after": plan.after}
        self.is_streaming = True
        self._stop_requested = False
        return [
            session_url_script(self.session_id),
            route,
            *apply_live(self, LiveAnswer(lang=self.lang), start),
            *(self._show_unsent() if show_unsent else []),  # one refused while this run answers
            ChatState.follow_live,
        ]

    def show_upload_problem(self, problem: UploadProblem) -> None:
        """Show why a file was refused, in the page's language (and again after a switch)."""
        self._upload_problem = problem
        self.upload_error = problem.words(self.lang)

    async def _leave_drafts(self) -> None:
        """Drop unsent attachments (and their files), and why one was refused, before another chat is shown."""
        if self.upload_error:
            self.upload_error = ""
        if self.attachments:
            await discard_attachments(
                self.user_name, self.session_id or self.draft_session_id, self.attachments
            )
            self.attachments = []
        self.draft_session_id = ""

    @rx.event
    async def load_page(self) -> Any:
        """On load: model facts, the user's sessions, and the session in the URL read afresh."""
        settings = _settings()
        self.lang = await ui_lang(self)
        # With no model configured the header says so rather than naming the default model name.
        self.model_name = settings.model_name if settings.model_configured else ""
        self.demo_mode = settings.demo_mode
        self.model_configured = settings.model_configured
        self.upload_max_bytes = settings.upload_max_bytes
        self._recheck_saved_name()  # kept before the rule existed: normalised, or asked again, saying why
        if not self.user_name:
            return None
        self.sessions = await load_sessions(self.user_name, self.lang)
        if self.is_streaming:  # a reload while this tab shows a live run: the text so far, again
            return [
                session_url_script(self.session_id),
                TEXT.put(self.live_id, self._live_text),
                REASONING.put(self.live_id, self._live_reasoning),
            ]
        wanted = self.router.url.query_parameters.get("session", "") or self.session_id
        if wanted:
            return await self._open(wanted)
        return [
            session_url_script(self.session_id),
            ModelState.follow_session(self.session_id, self.user_name),
            *self._show_unsent(),  # a new chat's refused first message
        ]

    def _begin(self, text: str, fork_turn: int | None = None, keep: list[str] | None = None) -> Any:
        """Send ``text``; with ``fork_turn``, in place of that user turn and all after it (edit, regenerate).

        ``keep``: which of the replaced turn's files go with it (None: all of them).
        """
        text = (text or "").strip()
        if not text or self.is_streaming:
            return None
        if not self.user_name:
            self.name_dialog_open = True
            return None
        attached = list(self.attachments)
        self._dropped_card = bool(self.interrupt.kind)  # confirmed first (DropConfirm)
        if fork_turn is not None:  # the chip stays: the resent turn keeps the replaced one's files
            self._pending_keep = attachments_at_turn(self.messages, fork_turn, [], keep)
            attached = attachments_at_turn(self.messages, fork_turn, attached, keep)
            self.messages = truncated_at_turn(self.messages, fork_turn)
        elif self.interrupt.kind:  # moving on without answering (confirmed): the pending call is dropped
            self.messages.append(as_dropped(to_message(current_live(self)), self.lang))
        self.messages.append(
            ChatMessageView(id=uuid.uuid4().hex, role="user", content=text, attachments=attached)
        )
        self._forget_unsent()
        self._pending_message, self._pending_fork = text, -1 if fork_turn is None else fork_turn
        self._pending_attachments, self.attachments = list(self.attachments), []
        self._new_live()
        self._clear_elsewhere()
        self.live_status = t(THINKING, self.lang)
        self.is_streaming = True
        self._stop_requested = False
        return ChatState.run_agent

    @rx.event
    async def send(self, form_data: dict[str, Any]) -> Any:
        """Submit of the composer form (field ``message``); asks first while a card waits."""
        text = without_nul(str(form_data.get("message") or ""))  # invisible in the box: not refusable
        held = await self._ask_before_dropping(text)
        return self._begin(text) if held is None else held or None

    @rx.event
    def send_suggestion(self, text: str) -> Any:
        """Send one of the empty-state suggestions."""
        return self._begin(text)

    @rx.event(background=True)
    async def run_agent(self) -> Any:
        """Admit the pending message, then follow its run; append the answer at the end."""
        async with self:
            message, self._pending_message = self._pending_message, ""
            fork, self._pending_fork = self._pending_fork, -1
            attachments, self._pending_attachments = self._pending_attachments, []
            dropped, self._dropped_card = self._dropped_card, False
            keep, self._pending_keep = self._pending_keep, []
            user_name, mode, lang = self.user_name, self.mode, self.lang
            session_id = self.session_id or self.draft_session_id or None
            new_session = not self.session_id and bool(self.draft_session_id)
            seen = self._seen_mark
            picker = await self.get_state(ModelState)
            model = picker.route if picker.has_choice else None
        if await login_gone(self, user_name):  # logged out or reset elsewhere: nothing runs as them
            yield await self._drop_login(message)
            return
        final = failed_answer(t(UI_FAILURE, lang), "ui_failure", lang)
        try:  # turns finished elsewhere since this tab read the session: shown once this one is admitted
            behind = (
                bool(session_id) and not new_session and await turns.session_mark(session_id or "") != seen
            )
            run, refused, rejection = await turns.admit_turn(
                message,
                user_name,
                session_id,
                attachments=attachments,
                mode=mode,
                new_session=new_session,
                lang=lang,
                model=model,
                fork_turn=None if fork < 0 else fork,
                keep_attachments=None if fork < 0 else keep,
            )
            if run is None:
                final = refused or final
                if fork < 0:  # an edit's text goes back into its box (keep_transcript)
                    async with self:
                        self._mark_unsent()
                    yield rx.set_value("chat-input", message)  # refused before it ran: the text is kept
                if rejection is not None and attachments:  # nothing ran: the files wait for the next message
                    async with self:
                        self.attachments = [*attachments, *self.attachments]
                elsewhere = await turns.answering_elsewhere(rejection, session_id, user_name)
                if elsewhere:
                    async with self:
                        self._answered_elsewhere()
                        if fork < 0:  # kept for a reload, as every refused message (ChatControls)
                            code, error = final.error_code, final.error
                            self._keep_unsent(
                                self.session_id, message, code, error, attachments, elsewhere=True
                            )
                if fork >= 0:  # the server still has the turns this tab cut off: show them again
                    async with self:
                        self.is_streaming = False
                    yield ChatState.keep_transcript(final.error_code, final.error, fork, message, keep)
                if elsewhere:  # once that answer ends, the notice says so and it is shown
                    yield await self._when_elsewhere_ends(session_id or "", user_name)
                if elsewhere or fork >= 0:
                    return
                if dropped and rejection is not None:  # the server still keeps the pending call: show it
                    async with self:
                        self.is_streaming = False
                    yield ChatState.keep_card(final.error_code, final.error)
                    return
            else:
                after = await turns.start(run)
                sessions = await load_sessions(user_name, lang)  # the new session is listed at once
                async with self:
                    self.session_id = run.session_id
                    if self.user_name == user_name:
                        self.sessions = sessions
                    stop = self._stop_requested
                if stop:  # Stop was pressed before the run was admitted
                    run.request_stop()
                if behind:
                    await self._catch_up(run.session_id, user_name, lang)
                # The session's dropped card (if any) no longer waits: the badges follow at once.
                yield [session_url_script(run.session_id), HandoffState.refresh]
                follower = Follower(run.run_id, after, LiveAnswer(status=t(THINKING, lang), lang=lang))
                async for events in self._follow_to_end(follower, follower.start, user_name, dropped):
                    yield events
                return
        except Exception:
            logger.exception("chat turn failed outside the run pipeline")
        async with self:
            self._finish(final, None, user_name)
            if fork < 0 and any(
                m.unsent for m in self.messages[-2:]
            ):  # refused, shown unsent: kept for a reload
                self._keep_unsent(self.session_id, message, final.error_code, final.error, attachments)
        yield HandoffState.refresh

    @rx.event
    def sent(self, form_data: dict[str, Any]) -> None:
        """The composer was submitted: a refused file's sentence belongs to the message before it."""
        del form_data
        self.upload_error = ""

    @rx.event
    async def new_chat(self) -> Any:
        """Start an empty conversation (the next message opens a new session)."""
        if self.is_streaming:
            return None
        if await login_gone(self, user := self.user_name):
            self.reset()
            return to_login("/", user)
        await self._leave_drafts()
        self._show_session("", None)
        return [session_url_script(""), ModelState.follow_session("", self.user_name)]

    @rx.event
    async def open_session(self, session_id: str) -> Any:
        """Show a session from the sidebar as the server has it now (the open one is read again)."""
        if self.is_streaming:
            return None
        if await login_gone(self, user := self.user_name):
            self.reset()  # back after the login to the conversation clicked, not the page it was clicked on
            return to_login(session_url(session_id), user)
        return await self._open(session_id)
