"""The live bubble: the answer a run streams into, followed to its end.

A mixin of :class:`~ventapp.state.chat_state.ChatState`, which starts runs (``run_agent``) and opens
sessions whose run is live (``follow_live``); :class:`~ventapp.state.card_answers.CardAnswers`
resumes paused ones into the same bubble. Here:

* the ``live_*`` vars, which get only what changed; the answer's text goes to the browser as small
  ``add`` events (:mod:`ventapp.state.live_text`), never as a growing state var;
* following a run from its log to its end (:class:`~ventapp.state.turns.Follower`), in whichever tab
  started it or opened its session meanwhile;
* the end (:meth:`LiveBubble._finish`): the paused answer keeps its bubble with the card
  (``interrupt``), or the answer is appended to the transcript once and the bubble is cleared;
* Stop (:meth:`LiveBubble.stop`), in any tab.
"""

from __future__ import annotations

import uuid
from typing import Any

import reflex as rx

from ventapp.state import turns
from ventapp.state.chat_data import load_sessions, session_url_script
from ventapp.state.interrupt_view import InterruptView, interrupt_view
from ventapp.state.live_answer import LiveAnswer, Said, said_at_end, to_message
from ventapp.state.schedules_state import HandoffState
from ventapp.state.server_view import differs_from_stored
from ventapp.state.turns import LIST_LIVE_VARS, LIVE_VARS, Follower, current_live
from ventapp.state.views import CitationView, SessionView, TodoView, ToolCardView


class LiveBubble(rx.State, mixin=True):
    """The answer shown live, from a run's start (or a tab joining it) to its card or its end."""

    is_streaming: bool = False
    """A run of the open session is shown live (started here, or followed from another tab)."""
    live_id: str = ""
    """The live answer's id: the browser shows its text buffer only for this id (``live_text``)."""
    _live_text: str = ""
    """The live answer's text as the browser has it; the browser gets only what is new."""
    _live_reasoning: str = ""
    """Its reasoning as the browser has it, likewise."""
    live_status: str = ""
    live_tools: list[ToolCardView] = []
    live_todos: list[TodoView] = []
    live_citations: list[CitationView] = []
    live_notice: str = ""
    interrupt: InterruptView = InterruptView()
    """The card of the pause the open session waits on (``kind == ""``: none). While it is
    set, the paused answer stays in the ``live_*`` vars and its bubble shows the card."""

    announcement: str = ""
    """What the page's one ``aria-live`` region says: the answer is complete, failed, or waits."""
    _said: Said = Said()
    """The same, in no language: :meth:`_say_again` words it anew after a language switch."""
    _follow: dict[str, Any] = {}
    """The live run a tab that opened the session picks up: ``{run_id, after}``."""
    _stop_requested: bool = False
    """Stop was pressed during this run (honoured at the next flush if the run was not yet known)."""

    @rx.var
    def live_open(self) -> bool:
        """The live bubble is on screen: a run streams, or a paused answer waits for its card."""
        return self.is_streaming or bool(self.interrupt.kind)

    def _reset_live(self) -> None:
        # Assign only what is not empty yet: every assignment is re-sent in the next delta.
        for var in LIVE_VARS.values():
            if getattr(self, var):
                setattr(self, var, [] if var in LIST_LIVE_VARS else "")
        self._live_text = self._live_reasoning = ""
        if self.interrupt.kind:
            self.interrupt = InterruptView()
        if self.refused_note:  # type: ignore[attr-defined]  # ServerView
            self.refused_note = ""

    def _unsay_waiting(self) -> None:
        """No card waits (answered in another tab, dropped): the region no longer says one does."""
        if not self.interrupt.kind and self._said.key == "a11y.waiting":
            self._say(Said())

    def _say(self, said: Said) -> None:
        self._said = said
        self.announcement = said.words(self.lang)  # type: ignore[attr-defined]  # on ChatState

    def _say_again(self) -> None:
        """After a language switch: the live region says what it said, in the page's new language."""
        if self.announcement != (words := self._said.words(self.lang)):  # type: ignore[attr-defined]
            self.announcement = words

    def _new_live(self) -> None:
        """A new live bubble: the browser's text of any earlier one no longer shows."""
        self._reset_live()
        self.live_id = uuid.uuid4().hex

    async def _follow_to_end(
        self, follower: Follower, shown: LiveAnswer, user_name: str, dropped: bool = False
    ) -> Any:
        """Follow a run in this tab to its end, then show its card or commit its answer (background).

        When the live answer may differ from the stored one (``dropped``: the run's message dropped a
        card; see :func:`differs_from_stored`), the stored transcript is shown at the end.
        """
        with turns.delivering():  # a shutdown waits until the answer's end is shown here
            async for events in follower.stream(self, shown):
                if events:
                    yield events
            final = follower.final
            async with self:
                lang = self.lang  # type: ignore[attr-defined]  # on ChatState; the page's now: it may have been switched while the answer streamed
                session_id = self.session_id  # type: ignore[attr-defined]
            sessions = await load_sessions(user_name, lang)  # a new title, the order after it
            mark = await turns.session_mark(session_id)  # with the answer just saved (OtherTabs)
            async with self:
                self._finish(final, sessions, user_name)
                shown_session = self.session_id
                if shown_session == session_id:
                    self._seen_mark = mark  # type: ignore[attr-defined]  # OtherTabs
                reread = dropped or differs_from_stored(final, self.lang)
        # A message in a scheduled run's session may have closed its pending question.
        yield [
            session_url_script(shown_session),
            HandoffState.refresh,
            *([self.__class__.settle] if reread else []),  # type: ignore[attr-defined]  # ServerView; self is a StateProxy
        ]

    @rx.event(background=True)
    async def follow_live(self) -> Any:
        """Follow the live run of a session this tab opened (``_follow``), then show its answer."""
        async with self:
            plan, self._follow = self._follow, {}
            shown = current_live(self)
            user_name = self.user_name  # type: ignore[attr-defined]  # on ChatState
        if not plan:
            return
        async for events in self._follow_to_end(
            Follower(plan["run_id"], plan["after"], shown), shown, user_name
        ):
            yield events

    def _finish(self, final: LiveAnswer, sessions: list[SessionView] | None, user_name: str) -> None:
        """End of a run (inside ``async with``): show its card, or commit the answer once."""
        view = interrupt_view(final.interrupt, final.lang) if final.paused else InterruptView()
        self._say(said_at_end(final, bool(view.kind)))
        if view.kind:
            self.interrupt = view  # the bubble stays live, now with the card
            if self.live_status:
                self.live_status = ""
        else:
            self.messages.append(to_message(final))  # type: ignore[attr-defined]  # on ChatState
            self._reset_live()
        self.is_streaming = False
        self._followed_ended()  # type: ignore[attr-defined]  # OtherTabs
        if self.session_id:
            self.draft_session_id = ""
        if sessions is not None and self.user_name == user_name:
            self.sessions = sessions

    @rx.event
    async def stop(self) -> None:
        """The Stop button: end the streaming run; its partial answer is kept, marked stopped."""
        if not self.is_streaming:
            return
        self._stop_requested = True
        await turns.stop_turn(self.session_id, self.user_name)
