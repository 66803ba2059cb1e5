"""One turn of the chat, seen from the UI: admit it, follow it from the run log, stop it.

These helpers are what :class:`~ventapp.state.chat_state.ChatState`'s background events
call. ``state`` is always the background task's proxy: every change happens inside
``async with state:`` and only the ``live_*`` vars whose value changed are assigned
(DESIGN.md, "UI streaming"). The answer's text and reasoning are no state vars: they go
to the browser as small ``add`` events (:mod:`ventapp.state.live_text`), so a token costs
the same bytes however long the answer is.

* :func:`admit_turn` admits a new message (:func:`ventapp.agent.pipeline.start_chat`);
* :func:`admit_resume` admits the answer to a paused run's card
  (:func:`ventapp.agent.resume.start_resume`);
* :func:`start` puts an admitted run on its own task (a closed tab is not a Stop) and
  :class:`Follower` shows it from the run log — the very same way in the tab that sent
  the message and in any other tab that opens the session while it runs;
* :func:`live_run` and :func:`follow_plan` tell a tab opening a session whether, and from
  where, to follow its live run;
* :func:`stop_turn` stops the session's active run (:func:`ventapp.agent.pipeline.stop_run`);
* :func:`load_interrupt` reads the pause a session waits on, for a reloaded page.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ventapp.agent import events as ev
from ventapp.agent.chat_run import ChatRun
from ventapp.agent.live_runs import go_live, live_state, until_closed
from ventapp.agent.pipeline import ChatRejected, ChatRequest, start_chat, stop_run
from ventapp.agent.prefixes import apply_prefixes
from ventapp.agent.resume import ResumeRequest, pending_interrupt, start_resume
from ventapp.agent.run_log import LogState
from ventapp.agent.runtime import AgentRuntime, get_runtime
from ventapp.agent.writeback import parked_pauses
from ventapp.db import chat_store
from ventapp.i18n import DEFAULT_LANG, has_message, t
from ventapp.state.live_answer import (
    LiveAnswer,
    changed_fields,
    continued,
    failed_answer,
    flushes,
    live_from_message,
)
from ventapp.state.live_text import REASONING, TEXT, LiveBuffer
from ventapp.state.views import ChatMessageView, worded_error

logger = logging.getLogger(__name__)

NOT_READY = "error.not_ready"
UI_FAILURE = "error.ui_failure"
THINKING = "live.thinking"
"""Message ids: the runtime is still starting; showing the answer failed; the first status line."""

LIVE_VARS: dict[str, str] = {
    "status": "live_status",
    "tools": "live_tools",
    "todos": "live_todos",
    "citations": "live_citations",
    "notice": "live_notice",
}
"""``LiveAnswer`` field -> the state var that shows it while the run streams (but see :data:`LIVE_BUFFERS`)."""
LIST_LIVE_VARS = frozenset({"live_tools", "live_todos", "live_citations"})
LIVE_BUFFERS: dict[str, tuple[LiveBuffer, str]] = {
    "text": (TEXT, "_live_text"),
    "reasoning": (REASONING, "_live_reasoning"),
}
"""``LiveAnswer`` field -> the browser's buffer that shows it, and the backend-only var mirroring
what that buffer holds: the strings that grow token by token."""


def current_runtime() -> AgentRuntime | None:
    """The process runtime, or None while it is still starting."""
    try:
        return get_runtime()
    except RuntimeError:
        return None


def delivering() -> contextlib.AbstractContextManager[None]:
    """:meth:`AgentRuntime.delivering` of the process runtime (nothing while it is not open)."""
    runtime = current_runtime()
    return runtime.delivering() if runtime is not None else contextlib.nullcontext()


def apply_live(state: Any, before: LiveAnswer, after: LiveAnswer) -> list[Any]:
    """Assign the ``live_*`` vars whose ``LiveAnswer`` field changed (call inside ``async with``).

    Returns:
        The events that bring the browser's buffers (text, reasoning) from ``before`` to
        ``after`` (send them after the block; empty when neither changed).
    """
    events: list[Any] = []
    for name in changed_fields(before, after):
        if name in LIVE_BUFFERS:
            buffer, mirror = LIVE_BUFFERS[name]
            events += buffer.events(state.live_id, getattr(before, name), getattr(after, name))
            setattr(state, mirror, getattr(after, name))
            continue
        var = LIVE_VARS.get(name)
        if var is None:
            continue
        value = getattr(after, name)
        setattr(state, var, list(value) if isinstance(value, tuple) else value)
    return events


def current_live(state: Any) -> LiveAnswer:
    """The answer the live bubble shows now (a paused answer, before it is resumed)."""
    return LiveAnswer(
        text=state._live_text,
        reasoning=state._live_reasoning,
        status=state.live_status,
        tools=tuple(state.live_tools),
        todos=tuple(state.live_todos),
        citations=tuple(state.live_citations),
        notice=state.live_notice,
        paused=bool(state.interrupt.kind),
        lang=state.lang,
    )


async def start(run: ChatRun) -> int:
    """Put an admitted run on its own task, writing to the run log; the ``seq`` to follow after.

    From here on the run does not depend on the tab: closing it, reloading it or its
    background task failing leaves the run going (only Stop stops it).
    """
    return await go_live(run.runtime.run_log, run)


class Follower:
    """Shows a run in a tab by reading its log, through the same reducer as every client.

    Args:
        run_id: The run to follow.
        after: The ``seq`` its frames start after (:func:`start`, :class:`FollowPlan`).
        start: What the bubble should show before the first frame (a resumed answer's
            paused part, or the status line).

    Attributes:
        final: The whole answer once :meth:`stream` ended (failures as ``error``).
    """

    def __init__(self, run_id: str, after: int, start: LiveAnswer) -> None:
        self.run_id = run_id
        self.after = after
        self.start = start
        self.final = dataclasses.replace(
            start, status="", error=t(UI_FAILURE, start.lang), error_code="ui_failure"
        )

    async def stream(self, state: Any, shown: LiveAnswer) -> AsyncIterator[list[Any]]:
        """Follow the run into ``state`` from what the tab ``shown`` now; yields the events to send.

        The caller yields each list from its background event (text ``add`` events:
        the state vars go out as deltas when each ``async with`` block ends).
        """
        runtime = current_runtime()
        try:
            if runtime is None:
                raise RuntimeError("runtime not open")
            if self.start != shown:
                yield await _show(state, shown, self.start)
            frames = runtime.run_log.frames(self.run_id, self.after)
            events = (frame.event async for frame in frames if frame is not None)
            async for flush in flushes(events, live=self.start):
                if flush.final:
                    self.final = flush.after
                    if flush.after.paused:  # the bubble stays on screen with its card
                        yield await _show(state, flush.before, flush.after)
                    break
                yield await _show(state, flush.before, flush.after)
        except Exception:
            logger.exception("following run %s failed", self.run_id)


async def _show(state: Any, before: LiveAnswer, after: LiveAnswer) -> list[Any]:
    async with state:
        return apply_live(state, before, after)


async def admit_turn(
    message: str,
    user_name: str,
    session_id: str | None,
    *,
    attachments: list[str] | None = None,
    mode: str | None = None,
    new_session: bool = False,
    lang: str = DEFAULT_LANG,
    model: str | None = None,
    fork_turn: int | None = None,
    keep_attachments: list[str] | None = None,
) -> tuple[ChatRun | None, LiveAnswer | None, ChatRejected | None]:
    """Admit one turn: ``(run, None, None)``, or ``(None, answer showing why, the refusal)``.

    The message's ``#skill:`` / ``#session:`` prefixes apply as in the API. Failures come
    back as an answer with ``error`` set (shown in the bubble), never as an exception.
    ``lang`` is the UI language: the answer is worded in it, and the model is asked to
    answer in it. ``fork_turn``: the message replaces that user turn and all after it (edit, regenerate),
    keeping those of its files in ``keep_attachments`` (None: all).
    """
    runtime = current_runtime()
    if runtime is None:
        return None, failed_answer(t(NOT_READY, lang), "not_ready", lang), None
    request = ChatRequest(
        message=message,
        user_name=user_name,
        session_id=session_id,
        attachments=list(attachments or []),
        mode=mode,
        new_session=new_session,
        lang=lang,
        model=model,
        fork_turn=fork_turn,
        keep_attachments=keep_attachments,
    )
    try:
        return await start_chat(runtime, apply_prefixes(request)), None, None
    except ChatRejected as exc:
        return None, failed_answer(_refusal_words(exc, lang), exc.code, lang), exc


def _refusal_words(refused: ChatRejected, lang: str) -> str:
    """A refusal's sentence for the bubble: worded in ``lang`` from its catalogue id when no plain
    sentence (``error.<code>``) stands for its code — the sentence itself is then the bubble's line
    (``#skill:`` naming no installed skill: which ones are, in the person's language)."""
    if refused.key and (refused.code == "bad_request" or not has_message(f"error.{refused.code}")):
        return refused.worded(lang)  # what was wrong with this message, not "could not be sent as is"
    return refused.message


@dataclass(frozen=True)
class FollowPlan:
    """Where a tab that opened a session picks up its live run.

    Attributes:
        run_id: The live run.
        after: Follow its frames after this ``seq``.
        paused_id: The stored message of the paused part this (resumed) run continues:
            the bubble starts from it, and it leaves the transcript meanwhile.
    """

    run_id: str
    after: int
    paused_id: str | None = None


async def live_run(session_id: str, user_name: str) -> LogState | None:
    """The session's run in the log, if it is still going (read *before* the transcript)."""
    runtime = current_runtime()
    if runtime is None or not session_id:
        return None
    state = await live_state(runtime.run_log, session_id, user_name)
    return state if state is not None and not state.ended else None


async def is_running(session_id: str, user_name: str) -> bool:
    """Whether the user's session is answering right now, in this process or another; never raises."""
    runtime = current_runtime()
    if runtime is None or not session_id:
        return False
    admitted = runtime.active_runs.get(session_id)
    if admitted is not None:
        return bool(admitted.user_name == user_name)
    try:
        return await live_run(session_id, user_name) is not None
    except Exception:
        logger.exception("reading the run log of session %s failed", session_id)
        return False


async def follow_plan(live: LogState | None, shown_ids: set[str]) -> FollowPlan | None:
    """Whether to follow ``live`` (from :func:`live_run`), given the message ids just read.

    The log was read before the transcript, so a run that was going then may have ended
    since: when its answer is already among ``shown_ids`` there is nothing to follow.

    Raises:
        EndedMeanwhile: The run ended between the two reads and its answer is not shown
            (the caller reads the transcript again).
    """
    runtime = current_runtime()
    if live is None or runtime is None:
        return None
    row = await asyncio.to_thread(chat_store.run_answer, runtime.engine, live.run.run_id)
    if row is not None and row.status != "waiting":
        if str(row.id) in shown_ids:
            return None
        raise EndedMeanwhile(live.run.run_id)
    paused_id = str(row.id) if row is not None else None
    return FollowPlan(run_id=live.run.run_id, after=live.first_seq - 1, paused_id=paused_id)


def follow_start(
    messages: list[ChatMessageView], plan: FollowPlan, lang: str = DEFAULT_LANG
) -> tuple[list[ChatMessageView], LiveAnswer]:
    """The transcript and the bubble a tab following ``plan`` starts from (worded in ``lang``).

    A resumed run's paused part leaves the transcript: the bubble goes on from it.
    """
    thinking = t(THINKING, lang)
    paused = next((m for m in messages if m.id == plan.paused_id), None)
    if paused is None:
        return messages, LiveAnswer(status=thinking, lang=lang)
    rest = [m for m in messages if m.id != plan.paused_id]
    return rest, continued(live_from_message(paused, lang), thinking)


async def answering_elsewhere(rejection: ChatRejected | None, session_id: str | None, user_name: str) -> bool:
    """True when a message was refused because its session answers in another tab or client."""
    if rejection is None or rejection.status != 409 or rejection.code != "busy" or not session_id:
        return False
    runtime = current_runtime()
    admitted = runtime.active_runs.get(session_id) if runtime is not None else None
    if admitted is not None and admitted.user_name == user_name:
        return True  # admitted, perhaps not yet writing to its log
    return await live_run(session_id, user_name) is not None


async def until_run_ends(session_id: str, user_name: str, pace_s: float = 0.5) -> None:
    """Return once the user's session answers no more (its run ended or paused); never raises.

    What a tab whose message the session refused waits for (:mod:`ventapp.state.other_tabs`):
    the run's log is read at most about every ``pace_s``, whatever its token rate.
    """
    runtime = current_runtime()
    if runtime is None or not session_id:
        return
    try:
        while True:
            state = await live_state(runtime.run_log, session_id, user_name)
            if state is not None and not state.ended:
                await until_closed(runtime.run_log, state.run.run_id, state.last_seq, pace_s)
                return
            if not await is_running(session_id, user_name):
                return
            await asyncio.sleep(pace_s)  # admitted but not logging yet, or logged its end but not released
    except Exception:
        logger.exception("waiting for the run of session %s to end failed", session_id)


async def session_mark(session_id: str) -> str:
    """:func:`chat_store.session_mark` of a session ("" for none, or when it cannot be read); never raises."""
    runtime = current_runtime()
    if runtime is None or not session_id:
        return ""
    try:
        return await asyncio.to_thread(chat_store.session_mark, runtime.engine, session_id)
    except Exception:
        logger.exception("reading the mark of session %s failed", session_id)
        return ""


class CardGone(Exception):
    """The card's pause is no longer the session's (answered elsewhere, or dropped by a newer message)."""


class EndedMeanwhile(Exception):
    """The run ended while the tab read the transcript: read it again."""


PAUSE_GONE = frozenset({"no_interrupt", "stale_interrupt"})
"""Refusals saying the card's pause is no longer the session's: the tab must read the session again."""


async def admit_resume(request: ResumeRequest, lang: str = DEFAULT_LANG) -> tuple[ChatRun | None, str]:
    """Admit the answer to a card: ``(run, "")``, or ``(None, sentence to show on the card)``.

    The sentence words :class:`ChatRejected`'s code in ``lang``: 409 when the pause was
    already answered or is out of date (the sentence then starts the tab's re-read, see
    :data:`PAUSE_GONE` and :meth:`~ventapp.state.server_view.ServerView.card_gone`), 422 when
    the answer does not fit it (its own sentence), 429 when busy.
    """
    runtime = current_runtime()
    if runtime is None:
        return None, t(NOT_READY, lang)
    try:
        return await start_resume(runtime, request), ""
    except ChatRejected as exc:
        if exc.code == "bad_request":  # the answer does not fit the card: its own sentence, in lang
            return None, exc.worded(lang) if exc.key else exc.message
        plain, _detail = worded_error(exc.code, exc.message, lang)
        if exc.code in PAUSE_GONE:
            raise CardGone(plain) from None
        return None, plain
    except Exception:
        logger.exception("resuming session %s failed", request.session_id)
        return None, t(UI_FAILURE, lang)


async def stop_turn(session_id: str, user_name: str) -> bool:
    """Stop the session's active run; False when none was running (or it is not the user's)."""
    runtime = current_runtime()
    if runtime is None or not session_id:
        return False
    try:
        return await stop_run(runtime, session_id, user_name)
    except ChatRejected:
        return False


def _may_wait(runtime: AgentRuntime, session_id: str) -> bool:
    # A pause parked in the spool (the database refused its end) waits too; the spool's count
    # is in memory, so this reads no file unless something is parked.
    return chat_store.session_waits(runtime.engine, session_id, parked_pauses(runtime.spool))


async def load_interrupt(session_id: str, user_name: str) -> ev.Interrupt | None:
    """The pause the session waits on (as its ``interrupt`` event), or None; never raises.

    Every message sent from a tab that shows no card asks this first (``DropConfirm``), and
    almost always nothing waits: one indexed row check (:func:`chat_store.session_waits`, which
    also counts a pause parked in the spool) answers that, and only a session that may wait has
    its graph checkpoint read.
    """
    runtime = current_runtime()
    if runtime is None or not session_id:
        return None
    try:
        if not await asyncio.to_thread(_may_wait, runtime, session_id):
            return None
        return await pending_interrupt(runtime, session_id, user_name)
    except ChatRejected:
        return None
    except Exception:
        logger.exception("reading the pending interrupt of session %s failed", session_id)
        return None
