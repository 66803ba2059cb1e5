"""What other tabs and clients did to the open session, shown when this tab touches it.

A mixin of :class:`~ventapp.state.chat_state.ChatState`. A person may have one conversation open
in two tabs (or a tab and an API client); a tab shows what the server has whenever it acts on the
session, never a transcript a reload would change:

* a message refused because the session answers elsewhere (409 ``busy``) goes back into the box,
  and a notice offers to follow that answer (``live_elsewhere``). It is not put in the transcript
  marked "not sent" (as a quota refusal is): the answer going on elsewhere comes before it, and the
  person usually wants to read it before sending. Like every refused message it is kept in the
  tab (``unsent_kept``): a reload puts it back in the box, under the notice. The tab then waits for
  that run to end (:func:`~ventapp.state.turns.until_run_ends`, a few log reads a second, nothing per token),
  shows the session as the server has it, and the notice says the message can be sent now
  (``elsewhere_ended``); so it does after Follow, once the answer followed ends;
* the tab keeps a mark of the stored transcript it shows (``_seen_mark``,
  :func:`~ventapp.db.chat_store.session_mark`: read before the transcript, so a turn written in
  between reads as new). A message sent while the mark differs (turns finished in another tab)
  shows the stored transcript once admitted, before its answer streams (:meth:`_catch_up`): one
  indexed read per message sent; a re-read only when something changed. The same check runs when
  the tab gets the focus back (:meth:`OtherTabs.catch_up_on_focus`), where a card shown gives way
  to the server's session once another tab or client answered or dropped it (its interrupt token is
  no longer the session's), and stays, with what was typed into it, while it still waits.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from ventapp.i18n import t
from ventapp.state import turns
from ventapp.state.chat_data import load_session
from ventapp.state.ui_identity import came_from, login_gone, to_login


class OtherTabs(rx.State, mixin=True):
    """The "answering elsewhere" notice and what the tab knows of the stored transcript."""

    live_elsewhere: bool = False
    """A message was refused because the session answers elsewhere (another tab or client)."""
    elsewhere_ended: bool = False
    """With ``live_elsewhere``: that answer has ended since, and is shown; the message can be sent now."""
    _followed_draft: bool = False
    """Follow was clicked on the notice: when that answer ends, the notice says the message can be sent."""
    _seen_mark: str = ""
    """:func:`~ventapp.db.chat_store.session_mark` of the stored transcript the tab shows ("" for none)."""

    def _clear_elsewhere(self) -> None:
        """The notice goes (a message sent, a session opened); only what is set is assigned."""
        if self.live_elsewhere:
            self.live_elsewhere = False
        if self.elsewhere_ended:
            self.elsewhere_ended = False
        self._followed_draft = False

    def _answered_elsewhere(self) -> None:
        """The message was refused: the session answers in another tab or client (inside ``async with``)."""
        if self.messages and self.messages[-1].role == "user":  # type: ignore[attr-defined]  # ChatState
            self.messages.pop()  # type: ignore[attr-defined]
        self._reset_live()  # type: ignore[attr-defined]
        self.is_streaming = False  # type: ignore[attr-defined]
        self.live_elsewhere, self.elsewhere_ended = True, False

    def _show_held_back(self, text: str) -> list[Any]:
        """After a (re)load: the message the session refused while it answered elsewhere goes back in
        the box, under the notice (no Follow: a reload already follows that answer if it goes on).

        Returns:
            The event putting ``text`` back in the composer.
        """
        if self.is_streaming:  # type: ignore[attr-defined]  # following it: the notice comes at its end
            self._followed_draft = True
        else:  # it ended: the message can be sent now
            self.live_elsewhere, self.elsewhere_ended = True, True
        return [rx.set_value("chat-input", text)]

    async def _when_elsewhere_ends(self, session_id: str, user_name: str) -> Any:
        """(Background, after :meth:`_answered_elsewhere`) wait for that run's end; the event showing it."""
        await turns.until_run_ends(session_id, user_name)
        return self.__class__.elsewhere_over(session_id)  # self is a StateProxy here: its type is not ours

    @rx.event
    async def elsewhere_over(self, session_id: str) -> Any:
        """The answer that refused this tab's message ended: show the session as the server has it.

        Nothing happens when the notice went meanwhile (a message sent, Follow, another session).
        """
        if not self.live_elsewhere or self.elsewhere_ended or self.session_id != session_id:  # type: ignore[attr-defined]
            return None
        if self.is_streaming:  # type: ignore[attr-defined]
            return None
        events = await self._reread()  # type: ignore[attr-defined]  # ServerView
        self.elsewhere_ended = True
        return events

    @rx.event
    async def follow_elsewhere(self) -> Any:
        """The notice's "Follow the answer": read the session again and follow the run it answers.

        The notice goes while the answer streams here, and comes back when it ends, saying the
        message (still in the box) can be sent now, as when the notice is left alone.
        """
        if self.is_streaming or not self.session_id:  # type: ignore[attr-defined]
            return None
        # The held-back message is in the box already, maybe edited since: not put back again.
        events = await self._open(self.session_id, show_unsent=False)  # type: ignore[attr-defined]
        if self.is_streaming:  # type: ignore[attr-defined]  # following it: the notice comes back at its end
            self._followed_draft = True
        else:  # it ended meanwhile, and is shown
            self.live_elsewhere, self.elsewhere_ended = True, True
        return events

    def _followed_ended(self) -> None:
        """A run this tab showed ended (inside ``async with``): after Follow, the message can be sent now."""
        if self._followed_draft:
            self._followed_draft = False
            self.live_elsewhere, self.elsewhere_ended = True, True

    @rx.event
    async def catch_up_on_focus(self) -> Any:
        """The tab has the focus again: show turns finished elsewhere meanwhile, if any.

        One indexed read (the mark) per focus; the transcript is read again only when it changed,
        and not while this tab streams or shows an edit box (typed text stays), nor while the
        session answers elsewhere (a send says so, and Follow shows it). A card shown gives way
        only when its pause is no longer the server's (:meth:`_card_still_waits`): a card that
        still waits keeps what was typed into it.
        """
        if not self.session_id or self.is_streaming or self.editing_id:  # type: ignore[attr-defined]
            return None
        mark = await turns.session_mark(self.session_id)  # type: ignore[attr-defined]
        if mark == self._seen_mark:
            return None
        if await login_gone(self, user := self.user_name):  # type: ignore[attr-defined]
            self.reset()
            return to_login(came_from(self), user)
        if await turns.is_running(self.session_id, user):  # type: ignore[attr-defined]
            return None
        if not self.interrupt.kind:  # type: ignore[attr-defined]
            return await self._reread()  # type: ignore[attr-defined]  # ServerView
        if await self._card_still_waits(user):
            self._seen_mark = mark  # the same pause: the transcript shown is still the stored one
            return None
        events = await self._reread()  # type: ignore[attr-defined]
        gone = t("error.no_interrupt", self.lang)  # type: ignore[attr-defined]
        self._say_why("", gone)  # type: ignore[attr-defined]  # a newer card waits: it says nothing of the old
        return events

    async def _card_still_waits(self, user_name: str) -> bool:
        """Whether the session still waits on the pause of the card shown (same interrupt token).

        Read only when the mark changed: another tab or client answered the card (its run
        ended, maybe on a new card) or dropped it with a newer message.
        """
        pending = await turns.load_interrupt(self.session_id, user_name)  # type: ignore[attr-defined]
        return pending is not None and pending.interrupt_token == self.interrupt.token  # type: ignore[attr-defined]

    async def _catch_up(self, session_id: str, user_name: str, lang: str) -> None:
        """(Background, once a message is admitted) show the stored transcript, which has turns this tab
        did not show: it ends with the message just admitted; the live bubble goes on after it."""
        loaded = await load_session(session_id, user_name, lang)
        if loaded is None:
            return
        async with self:
            if self.session_id == session_id and self.user_name == user_name:  # type: ignore[attr-defined]
                self.messages = loaded[0]  # type: ignore[attr-defined]
