"""The answers to a paused run's card (approve / edit / reject, questions, a plan), as state events.

A mixin of :class:`~ventapp.state.chat_state.ChatState`: it reads and sets that state's
``interrupt``, ``is_streaming`` and ``_resume_answer`` and chains into :meth:`CardAnswers.resume_agent`,
which streams the resumed run into the same bubble (with ``ChatState._follow_to_end``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import reflex as rx

from ventapp.agent.interrupts import ResumeAnswer
from ventapp.agent.resume import ResumeRequest
from ventapp.i18n import t
from ventapp.state import turns
from ventapp.state.interrupt_view import (
    InterruptView,
    approval_answer,
    plan_answer,
    questions_answer,
    reject_all,
    reviewed,
    unreviewed,
    with_mode,
)
from ventapp.state.live_answer import continued
from ventapp.state.turns import THINKING, Follower, current_live
from ventapp.state.ui_identity import login_gone


class CardAnswers(rx.State, mixin=True):
    """Events of the card shown while a run waits for a person."""

    def _answer(self, answer: ResumeAnswer | None, view: InterruptView) -> Any:
        """Show the card's problem, or start the resumed run (once: the card is disabled)."""
        if self.is_streaming or self.interrupt.submitting or not self.interrupt.token:
            return None
        if answer is None:
            self.interrupt = view
            return None
        self.interrupt = dataclasses.replace(view, submitting=True, error="")
        if view.kind == "tool_approval":  # the cards say what the person decided, live as after a reload
            self.live_tools = reviewed(list(self.live_tools), view, answer)
        self._resume_answer = dataclasses.asdict(answer)
        self.is_streaming = True
        self._stop_requested = False
        return type(self).resume_agent

    @rx.event(background=True)
    async def resume_agent(self) -> Any:
        """Resume the paused run with the card's answer, streaming into the same bubble."""
        async with self:
            request = ResumeRequest(
                session_id=self.session_id,  # type: ignore[attr-defined]  # on ChatState
                interrupt_token=self.interrupt.token,
                user_name=self.user_name,  # type: ignore[attr-defined]
                answer=ResumeAnswer(**self._resume_answer),
                lang=self.lang,  # type: ignore[attr-defined]
            )
            self._resume_answer = {}
            paused = current_live(self)
        if await login_gone(self, request.user_name):
            yield await self._drop_login()  # type: ignore[attr-defined]  # ChatControls
            return
        lang = paused.lang
        try:
            run, problem = await turns.admit_resume(request, lang)
        except turns.CardGone as gone:  # what this tab shows is out of date: show the server's
            yield self.__class__.card_gone(str(gone))  # type: ignore[attr-defined]  # ServerView; self is a StateProxy
            return
        if run is None:  # refused (quota, already answered, out of date, invalid): say so on the card
            async with self:
                self.live_tools = unreviewed(list(self.live_tools), self.interrupt)
                self.interrupt = dataclasses.replace(self.interrupt, submitting=False, error=problem)
                self.is_streaming = False
            return
        follower = Follower(run.run_id, await turns.start(run), continued(paused, t(THINKING, lang)))
        async with self:
            self.interrupt = InterruptView()  # the card goes; the bubble keeps streaming
        shown = dataclasses.replace(paused, paused=False)
        async for events in self._follow_to_end(follower, shown, request.user_name):  # type: ignore[attr-defined]
            yield events  # at the end an answered scheduled run no longer waits (HandoffState)

    @rx.event
    def toggle_call(self, index: int, mode: str) -> None:
        """Switch one call of an approval batch to ``edit`` / ``reject``, or back to approve."""
        if not self.interrupt.submitting:
            self.interrupt = with_mode(self.interrupt, index, mode)

    @rx.event
    def reject_all_calls(self) -> Any:
        """ "Reject all": every call of the batch rejected at once (the model reads the default reason)."""
        if self.interrupt.submitting:
            return None
        return self._answer(*approval_answer(reject_all(self.interrupt), {}))

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
