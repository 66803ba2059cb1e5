"""The open session as the server has it: shown again wherever the tab's own view could differ.

A mixin of :class:`~ventapp.state.chat_state.ChatState`. What a person sees live must equal what
they see after a reload (issue 12), and a few moments would otherwise part the two:

* the header's language switch (:meth:`ServerView.relocalise`): what the server worded (footers,
  notes, dates, the card) is worded again in the new language;
* a run that ended without ``done`` (Stop, quota, timeout, a failure), was followed while the
  language changed, or dropped a pending card: the stored answers carry the footer and notes a
  reload shows (:meth:`ServerView.settle`);
* a message that would have dropped a pending card was refused (:meth:`ServerView.keep_card`):
  the server still keeps the pending call, so the card comes back, saying why nothing was sent;
* an edit or a regenerate was refused (:meth:`ServerView.keep_transcript`): the tab had cut its
  transcript at the replaced turn, the server kept every turn, so they come back, saying why.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import reflex as rx

from ventapp.i18n import resolve_lang, t
from ventapp.state import turns
from ventapp.state.chat_data import edit_into_view, load_session, load_sessions
from ventapp.state.interrupt_view import interrupt_view
from ventapp.state.live_answer import LiveAnswer, live_from_message
from ventapp.state.turns import apply_live
from ventapp.state.views import STATUS_WAITING, ChatMessageView, sent_turns, worded_error

RESEND_REFUSED = "live.resend_refused"
"""Message id: an edit or regenerate was refused; the conversation is shown as it was."""


class ServerView(rx.State, mixin=True):
    """Re-read the open session's transcript and card; the language switch."""

    refused_note: str = ""
    """Why an edit or regenerate was not sent (``.resend-refused``); "" for none, cleared by the next send."""

    def _show_session(
        self, session_id: str, loaded: tuple[list[ChatMessageView], str] | None, mark: str = ""
    ) -> None:
        """Show ``loaded`` (None: an empty chat); ``mark``: the session's mark read before it (OtherTabs)."""
        messages, mode = loaded or ([], "full")
        self._seen_mark = mark if loaded is not None else ""  # type: ignore[attr-defined]  # OtherTabs
        self.messages = messages  # type: ignore[attr-defined]  # on ChatState
        self.session_id = session_id if loaded is not None else ""  # type: ignore[attr-defined]
        self.mode = mode  # type: ignore[attr-defined]
        self._reset_live()  # type: ignore[attr-defined]
        if loaded is None:  # an empty chat: no card can wait (a session's is read again after this)
            self._unsay_waiting()  # type: ignore[attr-defined]  # LiveBubble

    async def _restore_interrupt(self) -> list[Any]:
        """After a (re)load: if the session waits on a pause, show its answer live with the card.

        Else the ``aria-live`` region no longer says the agent waits (another tab answered the card).
        """
        events = await self._card_back()
        self._unsay_waiting()  # type: ignore[attr-defined]  # LiveBubble
        return events

    async def _card_back(self) -> list[Any]:
        messages: list[ChatMessageView] = self.messages  # type: ignore[attr-defined]
        last = messages[-1] if messages else None
        if last is None or (last.role == "assistant" and last.status != STATUS_WAITING):
            return []
        lang: str = self.lang  # type: ignore[attr-defined]
        view = interrupt_view(await turns.load_interrupt(self.session_id, self.user_name), lang)  # type: ignore[attr-defined]
        if not view.kind:
            return []
        paused = (
            live_from_message(messages.pop(), lang) if last.role == "assistant" else LiveAnswer(lang=lang)
        )
        self.messages = messages  # type: ignore[attr-defined]
        self._new_live()  # type: ignore[attr-defined]
        self.interrupt = view  # type: ignore[attr-defined]
        return apply_live(self, LiveAnswer(lang=lang), paused)

    async def _reread(self) -> list[Any]:
        """Show the open session's stored transcript and pending card again (not while it streams)."""
        if self.is_streaming or not self.session_id or self.interrupt.submitting:  # type: ignore[attr-defined]
            return []
        mark = await turns.session_mark(self.session_id)  # type: ignore[attr-defined]  # before: see OtherTabs
        loaded = await load_session(self.session_id, self.user_name, self.lang)  # type: ignore[attr-defined]
        if loaded is None:
            return []
        self._show_session(self.session_id, loaded, mark)
        return await self._restore_interrupt()

    @rx.event
    async def relocalise(self, lang: str) -> Any:
        """After the header's language switch: re-word what the server worded (transcript, list, card).

        A streaming answer keeps its language until it ends (:meth:`settle` re-words it then).
        """
        lang = resolve_lang(lang)
        if lang == self.lang:  # type: ignore[attr-defined]
            return None
        self.lang = lang  # type: ignore[attr-defined]
        self._say_again()  # type: ignore[attr-defined]  # LiveBubble
        if self.upload_error:  # type: ignore[attr-defined]  # ChatState: a refused file's sentence
            self.upload_error = self._upload_problem.words(lang)  # type: ignore[attr-defined]
        if not self.user_name:  # type: ignore[attr-defined]
            return None
        self.sessions = await load_sessions(self.user_name, lang)  # type: ignore[attr-defined]
        return await self._reread()

    @rx.event
    async def settle(self) -> Any:
        """After a run whose live answer may differ from the stored one: show the stored transcript."""
        return await self._reread()

    @rx.event
    async def keep_card(self, code: str, message: str) -> Any:
        """A message that dropped the pending card locally was refused: the server's card comes back.

        Args:
            code: The refusal's code (``quota``, ``busy`` …).
            message: The refusal's own sentence (kept behind the worded one).
        """
        events = await self._reread()
        reason = worded_error(code, message, self.lang)[0]  # type: ignore[attr-defined]
        self._say_why(t("live.drop_refused", self.lang, reason=reason), "")  # type: ignore[attr-defined]
        return events

    def _say_why(self, on_card: str, under_transcript: str) -> None:
        """After a re-read: the reason on the server's card if one waits, else under the transcript ("": none)."""
        if self.interrupt.kind:  # type: ignore[attr-defined]
            self.interrupt = dataclasses.replace(self.interrupt, error=on_card)  # type: ignore[attr-defined]
        elif under_transcript:
            self.refused_note = under_transcript  # type: ignore[attr-defined]

    @rx.event
    async def card_gone(self, sentence: str) -> Any:
        """An answer to this tab's card was refused because its pause is gone: show the server's session.

        Another tab or client answered it, or a newer message dropped it (an edit forked the
        session). The stored transcript comes back with the server's card if one waits (saying
        why on it), else with a line under the transcript.
        """
        self.interrupt = dataclasses.replace(self.interrupt, submitting=False)  # type: ignore[attr-defined]
        self.is_streaming = False  # type: ignore[attr-defined]
        events = await self._reread()
        self._say_why(sentence, sentence)
        return events

    @rx.event
    async def keep_transcript(self, code: str, message: str, fork: int, text: str, keep: list[str]) -> Any:
        """An edit or regenerate was refused: the turns this tab cut off come back, saying why.

        The stored transcript (and card, if one waits) is shown again with a line saying why
        nothing was sent; an edit's text goes back into its box, open again on the same turn.

        Args:
            code: The refusal's code (``quota``, ``busy`` …).
            message: The refusal's own sentence (kept behind the worded one).
            fork: The user turn (0-based) the message was to replace.
            text: The message that was refused.
            keep: The replaced turn's files the edit kept.
        """
        events = await self._reread()
        reason = worded_error(code, message, self.lang)[0]  # type: ignore[attr-defined]
        self._say_why(
            t("live.drop_refused", self.lang, reason=reason),  # type: ignore[attr-defined]
            # The "answering elsewhere" notice says it already when it shows.
            "" if self.live_elsewhere else t(RESEND_REFUSED, self.lang, reason=reason),  # type: ignore[attr-defined]
        )
        sent = sent_turns(self.messages)  # type: ignore[attr-defined]
        turn = sent[fork] if 0 <= fork < len(sent) else None
        if turn is not None and turn.content != text:  # an edit (a regenerate resends the turn as it is)
            self.editing_id, self.edit_draft = turn.id, text  # type: ignore[attr-defined]  # ChatControls
            self.edit_attachments = [p for p in turn.attachments if p in keep]  # type: ignore[attr-defined]
            events.append(edit_into_view())
        return events


def differs_from_stored(final: LiveAnswer, lang: str) -> bool:
    """True when a finished live answer would read otherwise after a reload.

    A run that ended without ``done`` (Stop, quota, timeout, a failure) has no usage live while the
    stored answer has (the footer); an answer followed while the page's language changed is worded
    in the old one.

    Args:
        final: The run's answer as the tab folded it.
        lang: The page's language now.
    """
    return final.lang != lang or (final.usage is None and not final.paused)
