"""Sending while an approval, a question or a plan waits: ask first, the pending call will be dropped.

A mixin of :class:`~ventapp.state.chat_state.ChatState`. Every way of sending asks: the composer,
an edited message and regenerate (both replace a turn, and the paused answer with it). The
composer's form resets when it is submitted, so the text is held here while the dialog is open:
Cancel puts it back in the box (an edit box simply stays open; the card stays as it was), Confirm
sends it; the paused answer then shows as dropped (:func:`ventapp.state.views.as_dropped`), as it
does after a reload. Should the server refuse the message, its card comes back
(:meth:`~ventapp.state.server_view.ServerView.keep_card`).

The card may wait unseen: another tab or client paused the session after this tab read it. So a
tab showing no card asks the server first (one read, :func:`ventapp.state.turns.load_interrupt`);
when the session waits, it is read again as a reload would show it, card and all, and then the
dialog asks. An edit or a regenerate whose turn is no longer where this tab saw it (another turn
came after it, or it was replaced) sends nothing: the card says the conversation changed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import reflex as rx

from ventapp.i18n import t
from ventapp.state import turns
from ventapp.state.chat_data import edit_into_view
from ventapp.state.views import sent_turns

CHANGED_ELSEWHERE = "live.changed_elsewhere"
"""Message id: an edit or regenerate was not sent, the conversation changed in another tab."""
COMPOSER_ID = "chat-input"


class DropConfirm(rx.State, mixin=True):
    """The confirm dialog shown when a message is sent while the open session waits on a card."""

    drop_confirm_text: str = ""
    """The message waiting for the person's confirmation; the dialog is open while it is not ""."""
    drop_confirm_fork: int = -1
    """The user turn the held message replaces (edit, regenerate: the dialog says "resend"); -1 for a new message."""

    async def _ask_before_dropping(
        self, text: str, fork_turn: int | None = None, last: bool = False
    ) -> list[Any] | None:
        """Hold ``text`` (replacing ``fork_turn``) and open the dialog when the session waits on a card.

        Args:
            text: The message to send.
            fork_turn: The user turn it replaces (edit, regenerate); None for a new message.
            last: The replaced turn must still be the session's last (regenerate answers the last
                message again).

        Returns:
            None when sending may go ahead at once; otherwise the events to send (the session's
            card shown after reading it again), and nothing is sent: the dialog is open, or the
            turn moved and the card says so.
        """
        interrupt = self.interrupt  # type: ignore[attr-defined]  # on ChatState
        if not text.strip() or interrupt.submitting or self.is_streaming:  # type: ignore[attr-defined]
            return None
        events: list[Any] = []
        if not interrupt.kind:
            session_id, user_name = self.session_id, self.user_name  # type: ignore[attr-defined]
            if not session_id or await turns.load_interrupt(session_id, user_name) is None:
                return None
            seen = [m.content for m in sent_turns(self.messages)]  # type: ignore[attr-defined]
            events = await self._reread()  # type: ignore[attr-defined]  # ServerView: as a reload shows it
            if fork_turn is not None and not self._same_turn(seen, fork_turn, last):
                return self._changed_elsewhere(events)
            if not self.interrupt.kind:  # type: ignore[attr-defined]  # answered meanwhile: nothing to drop
                return None
            if fork_turn is not None and self.editing_id:  # type: ignore[attr-defined]  # the re-read bubble
                self.editing_id = sent_turns(self.messages)[fork_turn].id  # type: ignore[attr-defined]
                self.edit_draft = text  # type: ignore[attr-defined]  # the box opens again with what was typed
                events.append(edit_into_view())
        self.drop_confirm_text = text
        self.drop_confirm_fork = -1 if fork_turn is None else fork_turn
        return events

    def _same_turn(self, seen: list[str], fork_turn: int, last: bool) -> bool:
        """The re-read transcript has the turns this tab saw up to ``fork_turn`` (and none after it if ``last``)."""
        stored = [m.content for m in sent_turns(self.messages)]  # type: ignore[attr-defined]
        kept = stored[: fork_turn + 1] == seen[: fork_turn + 1] and fork_turn < len(stored)
        return kept and (not last or len(stored) == fork_turn + 1)

    def _changed_elsewhere(self, events: list[Any]) -> list[Any]:
        """Nothing is sent: the edited or regenerated turn moved; the re-read card says why."""
        self.editing_id, self.edit_attachments = "", []  # type: ignore[attr-defined]  # ChatControls
        if self.interrupt.kind:  # type: ignore[attr-defined]
            error = t(CHANGED_ELSEWHERE, self.lang)  # type: ignore[attr-defined]
            self.interrupt = dataclasses.replace(self.interrupt, error=error)  # type: ignore[attr-defined]
        return events

    @rx.event
    def cancel_drop(self) -> Any:
        """Keep the pending card; a new message goes back into the composer, unsent (an edit stays open)."""
        text, self.drop_confirm_text = self.drop_confirm_text, ""
        fork, self.drop_confirm_fork = self.drop_confirm_fork, -1
        return rx.set_value(COMPOSER_ID, text) if text and fork < 0 else None

    @rx.event
    def on_drop_open_change(self, is_open: bool) -> Any:
        """Escape or a click outside closes the dialog as Cancel does."""
        return None if is_open else self.cancel_drop()

    @rx.event
    def confirm_drop(self) -> Any:
        """Send the held message: the pending call is dropped."""
        text, self.drop_confirm_text = self.drop_confirm_text, ""
        fork, self.drop_confirm_fork = self.drop_confirm_fork, -1
        if not text:
            return None
        if fork < 0:
            return self._begin(text)  # type: ignore[attr-defined]
        keep = list(self.edit_attachments) if self.editing_id else None  # type: ignore[attr-defined]  # ChatControls
        self.editing_id, self.edit_attachments = "", []  # type: ignore[attr-defined]
        return self._begin(text, fork_turn=fork, keep=keep)  # type: ignore[attr-defined]
