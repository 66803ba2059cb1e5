"""Sending while an approval, a question or a plan waits: ask first, the pending call will be dropped.

A mixin of :class:`~ventapp.state.chat_state.ChatState`. Every way of sending asks: the composer,
an edited message and regenerate (both replace a turn, and the paused answer with it). The
composer's form resets when it is submitted, so the text is held here while the dialog is open:
Cancel puts it back in the box (an edit box simply stays open; the card stays as it was), Confirm
sends it; the paused answer then shows as dropped (:func:`ventapp.state.views.as_dropped`), as it
does after a reload. Should the server refuse the message, its card comes back
(:meth:`~ventapp.state.server_view.ServerView.keep_card`).
"""

from __future__ import annotations

from typing import Any

import reflex as rx

COMPOSER_ID = "chat-input"


class DropConfirm(rx.State, mixin=True):
    """The confirm dialog shown when a message is sent while the open session waits on a card."""

    drop_confirm_text: str = ""
    """The message waiting for the person's confirmation; the dialog is open while it is not ""."""
    drop_confirm_fork: int = -1
    """The user turn the held message replaces (edit, regenerate: the dialog says "resend"); -1 for a new message."""

    def _ask_before_dropping(self, text: str, fork_turn: int | None = None) -> bool:
        """Hold ``text`` (replacing ``fork_turn``) and open the dialog when a card waits.

        Returns:
            True when the dialog opened; False when sending may go ahead at once.
        """
        interrupt = self.interrupt  # type: ignore[attr-defined]  # on ChatState
        if not text.strip() or not interrupt.kind or interrupt.submitting or self.is_streaming:  # type: ignore[attr-defined]
            return False
        self.drop_confirm_text = text
        self.drop_confirm_fork = -1 if fork_turn is None else fork_turn
        return True

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
