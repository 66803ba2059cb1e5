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

Approvals, questions and plans: a run that pauses keeps its bubble on screen (the
``live_*`` vars) with a card (``interrupt``, see :mod:`ventapp.state.interrupt_view`).
The card's answer chains into :meth:`ChatState.resume_agent`, which streams the resumed
run into the *same* bubble; the transcript gets one answer. A reloaded page gets the card
back from the checkpoint (:func:`ventapp.state.turns.load_interrupt`). While a run
streams, the Stop button calls :meth:`ChatState.stop`.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from typing import Any

import reflex as rx

from ventapp.agent.interrupts import ResumeAnswer
from ventapp.agent.resume import ResumeRequest
from ventapp.config import Settings, get_settings
from ventapp.i18n import DEFAULT_LANG, resolve_lang, t

__all__ = [  # helpers other states import from here
    "ChatState",
    "clean_user_name",
    "discard_attachments",
    "load_session",
    "load_sessions",
    "session_url_script",
]
from ventapp.state import turns, views
from ventapp.state.chat_data import (
    clean_user_name,
    discard_attachments,
    last_context,
    load_session,
    load_sessions,
    session_url_script,
)
from ventapp.state.interrupt_view import (
    InterruptView,
    approval_answer,
    interrupt_view,
    plan_answer,
    questions_answer,
    with_mode,
)
from ventapp.state.lang_state import ui_lang
from ventapp.state.live_answer import LiveAnswer, continued, failed_answer, live_from_message, to_message
from ventapp.state.model_state import ModelState
from ventapp.state.schedules_state import HandoffState
from ventapp.state.turns import LIST_LIVE_VARS, LIVE_VARS, THINKING, UI_FAILURE, apply_live, current_live
from ventapp.state.views import (
    STATUS_WAITING,
    ChatMessageView,
    CitationView,
    SessionView,
    TodoView,
    ToolCardView,
)

logger = logging.getLogger(__name__)


def _settings() -> Settings:
    runtime = turns.current_runtime()
    return runtime.settings if runtime is not None else get_settings()


def announcement(final: LiveAnswer, waiting: bool) -> str:
    """The sentence screen readers hear when a run ends (the ``aria-live`` region of the chat page)."""
    if final.error and final.error_code != "cancelled":
        return t("a11y.failed", final.lang, error=views.worded_error(final.error_code, final.error, final.lang)[0])
    return t("a11y.waiting" if waiting else "a11y.done", final.lang)


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
    interrupt: InterruptView = InterruptView()
    """The card of the pause the open session waits on (``kind == ""``: none). While it is
    set, the paused answer stays in the ``live_*`` vars and its bubble shows the card."""

    model_name: str = ""
    demo_mode: bool = False
    model_configured: bool = True
    announcement: str = ""
    """What the page's one ``aria-live`` region says: the answer is complete, failed, or waits."""
    lang: str = DEFAULT_LANG
    """The UI language server-worded text is in (footers, dates, errors): ``LangState``'s, read on
    load and on every switch (:meth:`relocalise`)."""

    _pending_message: str = ""
    _pending_attachments: list[str] = []
    _resume_answer: dict[str, Any] = {}
    """The card's answer (``ResumeAnswer`` fields) handed to :meth:`resume_agent`."""
    _stop_requested: bool = False
    """Stop was pressed during this run (honoured at the next flush if the run was not yet known)."""

    @rx.var
    def live_open(self) -> bool:
        """The live bubble is on screen: a run streams, or a paused answer waits for its card."""
        return self.is_streaming or bool(self.interrupt.kind)

    @rx.var
    def context_percent(self) -> int:
        """Context occupancy after the session's last answer, 0–100 (``.context-gauge``)."""
        return views.context_percent(*last_context(self.messages))

    @rx.var
    def context_label(self) -> str:
        """e.g. ``"Context: 1.1k of 128k tokens (1%)"``; ``""`` before any answer reported it."""
        return views.context_label(*last_context(self.messages), self.lang)

    def _reset_live(self) -> None:
        # Assign only what is not empty yet: every assignment is re-sent in the next delta.
        for var in LIVE_VARS.values():
            if getattr(self, var):
                setattr(self, var, [] if var in LIST_LIVE_VARS else "")
        if self.interrupt.kind:
            self.interrupt = InterruptView()

    def _show_session(self, session_id: str, loaded: tuple[list[ChatMessageView], str] | None) -> None:
        messages, mode = loaded or ([], "full")
        self.messages = messages
        self.session_id = session_id if loaded is not None else ""
        self.mode = mode
        self._reset_live()

    async def _restore_interrupt(self) -> None:
        """After a (re)load: if the session waits on a pause, show its answer live with the card."""
        last = self.messages[-1] if self.messages else None
        if last is None or (last.role == "assistant" and last.status != STATUS_WAITING):
            return
        view = interrupt_view(await turns.load_interrupt(self.session_id, self.user_name), self.lang)
        if not view.kind:
            return
        paused = (
            live_from_message(self.messages.pop(), self.lang) if last.role == "assistant" else LiveAnswer(lang=self.lang)
        )
        apply_live(self, LiveAnswer(lang=self.lang), paused)
        self.interrupt = view

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
        self.lang = await ui_lang(self)
        self.model_name = settings.model_name
        self.demo_mode = settings.demo_mode
        self.model_configured = settings.model_configured
        stored, _ = clean_user_name(self.user_name, self.lang) if self.user_name else ("", "")
        if stored != self.user_name:
            self.user_name = stored  # kept before the rule existed: normalised, or asked again ("")
        if not self.user_name:
            return None
        self.sessions = await load_sessions(self.user_name, self.lang)
        if self.is_streaming:
            return None
        wanted = self.router.url.query_parameters.get("session", "") or self.session_id
        # A pending card is always re-read: it may have been answered elsewhere meanwhile.
        if wanted and (wanted != self.session_id or not self.messages or self.interrupt.kind):
            await self._leave_drafts()
            self._show_session(wanted, await load_session(wanted, self.user_name, self.lang))
            await self._restore_interrupt()
        return [
            session_url_script(self.session_id),
            ModelState.follow_session(self.session_id, self.user_name),
        ]

    @rx.event
    async def relocalise(self, lang: str) -> None:
        """After the header's language switch: re-word what the server worded (transcript, list, card).

        A streaming answer keeps its language until it ends; everything after follows the switch.
        """
        lang = resolve_lang(lang)
        if lang == self.lang:
            return
        self.lang = lang
        if not self.user_name:
            return
        self.sessions = await load_sessions(self.user_name, lang)
        if self.is_streaming or not self.session_id or self.interrupt.submitting:
            return
        loaded = await load_session(self.session_id, self.user_name, lang)
        if loaded is not None:
            self._show_session(self.session_id, loaded)
            await self._restore_interrupt()

    def _begin(self, text: str) -> Any:
        text = (text or "").strip()
        if not text or self.is_streaming:
            return None
        if not self.user_name:
            self.name_dialog_open = True
            return None
        if self.interrupt.kind:  # moving on without answering: the paused answer stays as it is
            self.messages.append(to_message(current_live(self)))
        self.messages.append(ChatMessageView(id=uuid.uuid4().hex, role="user", content=text))
        self._pending_message = text
        self._pending_attachments, self.attachments = list(self.attachments), []
        self._reset_live()
        self.live_status = t(THINKING, self.lang)
        self.is_streaming = True
        self._stop_requested = False
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
            user_name, mode, lang = self.user_name, self.mode, self.lang
            session_id = self.session_id or self.draft_session_id or None
            new_session = not self.session_id and bool(self.draft_session_id)
            picker = await self.get_state(ModelState)
            model = picker.route if picker.has_choice else None
        final = failed_answer(t(UI_FAILURE, lang), "ui_failure", lang)
        sessions: list[SessionView] | None = None
        try:
            final = await turns.run_turn(
                self,
                message,
                user_name,
                session_id,
                attachments=attachments,
                mode=mode,
                new_session=new_session,
                lang=lang,
                model=model,
            )
            sessions = await load_sessions(user_name, lang)  # the new session's title shows in the list
        except Exception:
            logger.exception("chat turn failed outside the run pipeline")
        finally:
            async with self:
                self._finish(final, sessions, user_name)
                shown = self.session_id
        # A message in a scheduled run's session may have closed its pending question.
        return [session_url_script(shown), HandoffState.refresh]

    def _finish(self, final: LiveAnswer, sessions: list[SessionView] | None, user_name: str) -> None:
        """End of a run (inside ``async with``): show its card, or commit the answer once."""
        view = interrupt_view(final.interrupt, final.lang) if final.paused else InterruptView()
        self.announcement = announcement(final, bool(view.kind))
        if view.kind:
            self.interrupt = view  # the bubble stays live, now with the card
            if self.live_status:
                self.live_status = ""
        else:
            self.messages.append(to_message(final))
            self._reset_live()
        self.is_streaming = False
        if self.session_id:
            self.draft_session_id = ""
        if sessions is not None and self.user_name == user_name:
            self.sessions = sessions

    # --- the card of a paused run ------------------------------------------------------

    def _answer(self, answer: ResumeAnswer | None, view: InterruptView) -> Any:
        """Show the card's problem, or start the resumed run (once: the card is disabled)."""
        if self.is_streaming or self.interrupt.submitting or not self.interrupt.token:
            return None
        if answer is None:
            self.interrupt = view
            return None
        self.interrupt = dataclasses.replace(view, submitting=True, error="")
        self._resume_answer = dataclasses.asdict(answer)
        self.is_streaming = True
        self._stop_requested = False
        return ChatState.resume_agent

    @rx.event
    def toggle_call(self, index: int, mode: str) -> None:
        """Switch one call of an approval batch to ``edit`` / ``reject``, or back to approve."""
        if not self.interrupt.submitting:
            self.interrupt = with_mode(self.interrupt, index, mode)

    @rx.event
    def submit_approval(self, form_data: dict[str, Any]) -> Any:
        """The approval card's form: one decision per call, in order."""
        return self._answer(*approval_answer(self.interrupt, form_data))

    @rx.event
    def submit_answers(self, form_data: dict[str, Any]) -> Any:
        """The questions card's form (``answer_<i>``)."""
        return self._answer(*questions_answer(self.interrupt, form_data))

    @rx.event
    def approve_plan(self) -> Any:
        """Approve the plan as it stands."""
        return self._answer(*plan_answer(self.interrupt, approved=True))

    @rx.event
    def send_plan_feedback(self, form_data: dict[str, Any]) -> Any:
        """Send the plan back with the typed feedback (``feedback``)."""
        return self._answer(*plan_answer(self.interrupt, False, str(form_data.get("feedback") or "")))

    @rx.event(background=True)
    async def resume_agent(self) -> Any:
        """Resume the paused run with the card's answer, streaming into the same bubble."""
        async with self:
            request = ResumeRequest(
                session_id=self.session_id,
                interrupt_token=self.interrupt.token,
                user_name=self.user_name,
                answer=ResumeAnswer(**self._resume_answer),
                lang=self.lang,
            )
            self._resume_answer = {}
            paused = current_live(self)
        lang = paused.lang
        run, problem = await turns.admit_resume(request, lang)
        if run is None:  # refused (already answered, out of date, invalid): say so on the card
            async with self:
                self.interrupt = dataclasses.replace(self.interrupt, submitting=False, error=problem)
                self.is_streaming = False
            return None
        start = continued(paused, t(THINKING, lang))
        final = dataclasses.replace(start, status="", error=t(UI_FAILURE, lang), error_code="ui_failure")
        sessions: list[SessionView] | None = None
        try:
            async with self:
                self.interrupt = InterruptView()  # the card goes; the bubble keeps streaming
                apply_live(self, paused, start)
            final = await turns.stream_run(self, run, start)
            sessions = await load_sessions(request.user_name, lang)
        except Exception:
            logger.exception("resumed turn failed outside the run pipeline")
        finally:
            run.release()  # a no-op once its events were read
            async with self:
                self._finish(final, sessions, request.user_name)
        return HandoffState.refresh  # an answered scheduled run no longer waits

    @rx.event
    async def stop(self) -> None:
        """The Stop button: end the streaming run; its partial answer is kept, marked stopped."""
        if not self.is_streaming:
            return
        self._stop_requested = True
        await turns.stop_turn(self.session_id, self.user_name)

    @rx.event
    async def new_chat(self) -> Any:
        """Start an empty conversation (the next message opens a new session)."""
        if self.is_streaming:
            return None
        await self._leave_drafts()
        self._show_session("", None)
        return [session_url_script(""), ModelState.follow_session("", self.user_name)]

    @rx.event
    async def open_session(self, session_id: str) -> Any:
        """Show a past session from the sidebar and continue it."""
        if self.is_streaming or session_id == self.session_id:
            return None
        loaded = await load_session(session_id, self.user_name, self.lang)
        if loaded is None:
            return None
        await self._leave_drafts()
        self._show_session(session_id, loaded)
        await self._restore_interrupt()
        return [session_url_script(session_id), ModelState.follow_session(session_id, self.user_name)]

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
        name, problem = clean_user_name(str(form_data.get("user_name") or ""), self.lang)
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
        self.sessions = await load_sessions(name, self.lang)
        return session_url_script(self.session_id)
