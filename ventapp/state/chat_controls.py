"""The standard chat controls on sent messages: edit and resend, regenerate, retry.

A mixin of :class:`~ventapp.state.chat_state.ChatState`. Edit and regenerate never re-send the
conversation as text: they send one message with ``fork_turn``, and the pipeline forks the
thread from the checkpoint before that turn (:mod:`ventapp.agent.fork`), replacing the stored
messages from it on. Retry after a refusal sends the kept text again; after a failed run it
regenerates the answer.

A refused message is not stored on the server, so the tab keeps it in the browser's session storage
(``unsent_kept``, per tab, as Reflex restores it on reload): a reload or reopening its session shows it
again, marked unsent with Retry and the refusal's sentence, and puts its text back in the box, as it
was before the reload (nothing a person typed is lost; live equals reload). One message is kept per tab,
the last one refused: a later refusal replaces it (the box, too, holds only the last).
A message refused because the session answered elsewhere (409 ``busy``) is kept too; it comes back as it
was shown, in the box under the "answering elsewhere" notice (:mod:`~ventapp.state.other_tabs`).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import reflex as rx

from ventapp.state.chat_data import edit_into_view
from ventapp.state.live_answer import failed_answer, to_message
from ventapp.state.ui_identity import came_from, to_login
from ventapp.state.views import ChatMessageView, sent_turns
from ventapp.text_rules import without_nul


def turn_of(messages: list[ChatMessageView], message_id: str) -> int | None:
    """Which stored user turn (0-based) the bubble ``message_id`` is; None for another bubble."""
    return next((i for i, m in enumerate(sent_turns(messages)) if m.id == message_id), None)


def truncated_at_turn(messages: list[ChatMessageView], turn: int) -> list[ChatMessageView]:
    """The transcript before the ``turn``-th stored user message (all of it when there is none)."""
    sent = sent_turns(messages)
    if turn >= len(sent):
        return list(messages)
    return messages[: messages.index(sent[turn])]


def attachments_at_turn(
    messages: list[ChatMessageView], turn: int, added: list[str], keep: list[str] | None = None
) -> list[str]:
    """The files a resent ``turn`` carries: the replaced message's (those in ``keep``; None: all), then ``added``."""
    sent = sent_turns(messages)
    kept = [p for p in (sent[turn].attachments if turn < len(sent) else []) if keep is None or p in keep]
    return [*kept, *(path for path in added if path not in kept)]


class ChatControls(rx.State, mixin=True):
    """Edit a sent message, regenerate the last answer, retry a refused or failed one."""

    editing_id: str = ""
    """The user bubble being edited in place ("" for none)."""
    edit_attachments: list[str] = []
    """The files the edited message is sent with: the replaced message's; the person may remove them."""
    edit_draft: str = ""
    """What the edit box opens with instead of the message (a refused edit's text); "" for the message."""
    unsent_kept: str = rx.SessionStorage("", name="ventagent_unsent")
    """This tab's message the server refused before it ran, as JSON ``{session, text, code, error,
    attachments}`` and ``elsewhere: true`` for one refused while the session answered elsewhere
    (``session``: "" in a new chat); "" for none. Cleared by the next message sent in that chat."""

    def _keep_unsent(
        self,
        session_id: str,
        text: str,
        code: str,
        error: str,
        attachments: list[str],
        elsewhere: bool = False,
    ) -> None:
        """Remember the refused message in the browser's tab (inside ``async with``); ``elsewhere``: it
        was refused because the session answered in another tab or client (shown in the box only)."""
        kept = {"session": session_id, "text": text, "code": code, "error": error, "attachments": attachments}
        self.unsent_kept = json.dumps(
            {**kept, **({"elsewhere": True} if elsewhere else {})}, ensure_ascii=False
        )

    def _kept_unsent(self) -> dict[str, Any]:
        """The kept refused message (``unsent_kept`` read); ``{}`` for none or an unreadable one."""
        try:
            kept = json.loads(self.unsent_kept) if self.unsent_kept else {}
        except ValueError:
            return {}
        return kept if isinstance(kept, dict) else {}

    def _forget_unsent(self) -> None:
        """A message is sent in the kept one's chat: it replaces it (another chat's stays kept)."""
        if self.unsent_kept and self._kept_unsent().get("session", "") == self.session_id:  # type: ignore[attr-defined]
            self.unsent_kept = ""

    def _show_unsent(self) -> list[Any]:
        """After a (re)load of the tab's session: its refused message again, with Retry; its text in the box.

        A message refused because the session answered in another tab (``elsewhere``) is not in the
        transcript (:mod:`~ventapp.state.other_tabs`): its text goes back in the box, with the notice.

        Returns:
            The event putting the text back in the composer, or ``[]`` when nothing is kept for the
            session shown (or it is shown already, or a card or a run holds the session).
        """
        kept = self._kept_unsent()
        messages: list[ChatMessageView] = self.messages  # type: ignore[attr-defined]
        text = str(kept.get("text") or "")
        if not text or kept.get("session", "") != self.session_id:  # type: ignore[attr-defined]
            return []
        if kept.get("elsewhere"):  # answered elsewhere: the box and the notice, as when it was refused
            return self._show_held_back(text)  # type: ignore[attr-defined]  # OtherTabs
        if self.is_streaming or self.interrupt.kind:  # type: ignore[attr-defined]
            return []
        if not any(m.unsent for m in messages):  # the tab's state may still show it (same token)
            lang: str = self.lang  # type: ignore[attr-defined]
            refusal = failed_answer(str(kept.get("error") or ""), str(kept.get("code") or "internal"), lang)
            attachments = [str(p) for p in kept.get("attachments") or []]
            user = ChatMessageView(
                id=uuid.uuid4().hex, role="user", content=text, attachments=attachments, unsent=True
            )
            self.messages = [*messages, user, to_message(refusal)]  # type: ignore[attr-defined]
        return [rx.set_value("chat-input", text)]

    def _mark_unsent(self) -> None:
        """The last user bubble was refused before it ran (inside ``async with``)."""
        messages = self.messages  # type: ignore[attr-defined]  # on ChatState
        if messages and messages[-1].role == "user":
            messages[-1].unsent = True
            self.messages = messages  # type: ignore[attr-defined]

    async def _drop_login(self, draft: str | None = None) -> Any:
        """(Background task) This tab's login ended on the server: forget it; the event to ``/login``
        (keeping ``draft``, the message it refused, for the user's next login)."""
        async with self:
            user_name, back = self.user_name, came_from(self)  # type: ignore[attr-defined]
            self.reset()
        return to_login(back, user_name, draft)

    @rx.event
    def start_edit(self, message_id: str) -> Any:
        """Open a sent message for editing (not while an answer streams); its box scrolls into view."""
        if self.is_streaming:  # type: ignore[attr-defined]
            return None
        self.editing_id, self.edit_draft = message_id, ""
        messages: list[ChatMessageView] = self.messages  # type: ignore[attr-defined]
        edited = next((m for m in messages if m.id == message_id), None)
        self.edit_attachments = list(edited.attachments) if edited is not None else []
        return edit_into_view()

    @rx.event
    def cancel_edit(self) -> None:
        """Close the edit box; the message stays as it was."""
        self.editing_id, self.edit_draft = "", ""
        self.edit_attachments = []

    @rx.event
    def remove_edit_attachment(self, path: str) -> None:
        """Leave a file out of the edited message (the file itself stays in the workspace)."""
        self.edit_attachments = [kept for kept in self.edit_attachments if kept != path]

    @rx.event
    async def send_edit(self, form_data: dict[str, Any]) -> Any:
        """Send the edited text in place of that turn: its later turns are replaced."""
        turn = turn_of(self.messages, self.editing_id)  # type: ignore[attr-defined]
        text = without_nul(str(form_data.get("edited") or "")).strip()  # as the chat box sends it
        if turn is None or not text or self.is_streaming:  # type: ignore[attr-defined]
            return None
        held = await self._ask_before_dropping(text, turn)  # type: ignore[attr-defined]
        if held is not None:  # a card waits: the box stays open
            return held or None
        keep, self.editing_id, self.edit_attachments = list(self.edit_attachments), "", []
        self.edit_draft = ""
        return self._begin(text, fork_turn=turn, keep=keep)  # type: ignore[attr-defined]

    @rx.event
    async def regenerate(self) -> Any:
        """Answer the last stored message again, from the checkpoint before it."""
        sent = sent_turns(self.messages)  # type: ignore[attr-defined]
        if not sent or self.is_streaming:  # type: ignore[attr-defined]
            return None
        held = await self._ask_before_dropping(sent[-1].content, len(sent) - 1, last=True)  # type: ignore[attr-defined]
        if held is not None:
            return held or None
        return self._begin(sent[-1].content, fork_turn=len(sent) - 1)  # type: ignore[attr-defined]

    @rx.event
    async def retry(self) -> Any:
        """Retry: a refused message is sent again (the box is emptied); a failed answer is regenerated.

        Sending again asks first, as Send does, when the session waits on a card (maybe one
        another tab left meanwhile: ``DropConfirm``); Cancel then puts the text back in the box.
        """
        messages = self.messages  # type: ignore[attr-defined]
        last_user = next((m for m in reversed(messages) if m.role == "user"), None)
        if last_user is None or self.is_streaming:  # type: ignore[attr-defined]
            return None
        if not last_user.unsent:
            return type(self).regenerate  # type: ignore[attr-defined]
        self.messages = messages[: messages.index(last_user)]  # type: ignore[attr-defined]
        emptied = rx.set_value("chat-input", "")
        held = await self._ask_before_dropping(last_user.content)  # type: ignore[attr-defined]
        if held is not None:
            return [emptied, *held]
        follow = self._begin(last_user.content)  # type: ignore[attr-defined]
        return [emptied, *([follow] if follow is not None else [])]
