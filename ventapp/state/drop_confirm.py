"""Sending while an approval, a question or a plan waits: ask first, the pending call will be dropped.

A mixin of :class:`~ventapp.state.chat_state.ChatState`. The composer's form resets when it is
submitted, so the text is held here while the dialog is open: Cancel puts it back in the box (the
card stays as it was), Confirm sends it; the paused answer then shows as dropped
(:func:`ventapp.state.views.as_dropped`), as it does after a reload.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

COMPOSER_ID = "chat-input"


class DropConfirm(rx.State, mixin=True):
    """The confirm dialog shown when a message is sent while the open session waits on a card."""

    drop_confirm_text: str = ""
    """The message waiting for the person's confirmation; the dialog is open while it is not ""."""

    def _ask_before_dropping(self, text: str) -> bool:
        """Hold ``text`` and open the dialog when a card waits; False when sending may go ahead."""
        interrupt = self.interrupt  # type: ignore[attr-defined]  # on ChatState
        if not text.strip() or not interrupt.kind or interrupt.submitting or self.is_streaming:  # type: ignore[attr-defined]
            return False
        self.drop_confirm_text = text
        return True

    @rx.event
    def cancel_drop(self) -> Any:
        """Keep the pending card; the message goes back into the composer, unsent."""
        text, self.drop_confirm_text = self.drop_confirm_text, ""
        return rx.set_value(COMPOSER_ID, text) if text else None

    @rx.event
    def on_drop_open_change(self, is_open: bool) -> Any:
        """Escape or a click outside closes the dialog as Cancel does."""
        return None if is_open else self.cancel_drop()

    @rx.event
    def confirm_drop(self) -> Any:
        """Send the held message: the pending call is dropped."""
        text, self.drop_confirm_text = self.drop_confirm_text, ""
        return self._begin(text) if text else None  # type: ignore[attr-defined]
