"""The answers to a paused run's card (approve / edit / reject, questions, a plan), as state events.

A mixin of :class:`~ventapp.state.chat_state.ChatState`: it reads and sets that state's
``interrupt``, ``is_streaming`` and ``_resume_answer`` and chains into its
``resume_agent``, which streams the resumed run into the same bubble.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import reflex as rx

from ventapp.agent.interrupts import ResumeAnswer
from ventapp.state.interrupt_view import (
    InterruptView,
    approval_answer,
    plan_answer,
    questions_answer,
    reject_all,
    reviewed,
    with_mode,
)


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
        return type(self).resume_agent  # type: ignore[attr-defined]  # on ChatState

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
