"""One turn of the chat, seen from the UI: admit it, stream it into the ``live_*`` vars, stop it.

These helpers are what :class:`~ventapp.state.chat_state.ChatState`'s background events
call. ``state`` is always the background task's proxy: every change happens inside
``async with state:`` and only the ``live_*`` vars whose value changed are assigned
(DESIGN.md, "UI streaming").

* :func:`run_turn` admits a new message (:func:`ventapp.agent.pipeline.start_chat`);
* :func:`admit_resume` admits the answer to a paused run's card
  (:func:`ventapp.agent.resume.start_resume`);
* both stream with :func:`stream_run`, which also honours a Stop pressed before the
  run could be found by session (``state._stop_requested``);
* :func:`stop_turn` stops the session's active run (:func:`ventapp.agent.pipeline.stop_run`);
* :func:`load_interrupt` reads the pause a session waits on, for a reloaded page.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from ventapp.agent import events as ev
from ventapp.agent.chat_run import ChatRun
from ventapp.agent.pipeline import ChatRejected, ChatRequest, start_chat, stop_run
from ventapp.agent.prefixes import apply_prefixes
from ventapp.agent.resume import ResumeRequest, pending_interrupt, start_resume
from ventapp.agent.runtime import AgentRuntime, get_runtime
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.state.live_answer import LiveAnswer, changed_fields, failed_answer, pump
from ventapp.state.views import worded_error

logger = logging.getLogger(__name__)

NOT_READY = "error.not_ready"
UI_FAILURE = "error.ui_failure"
THINKING = "live.thinking"
"""Message ids: the runtime is still starting; showing the answer failed; the first status line."""

LIVE_VARS: dict[str, str] = {
    "text": "live_text",
    "reasoning": "live_reasoning",
    "status": "live_status",
    "tools": "live_tools",
    "todos": "live_todos",
    "citations": "live_citations",
    "notice": "live_notice",
}
"""``LiveAnswer`` field -> the state var that shows it while the run streams."""
LIST_LIVE_VARS = frozenset({"live_tools", "live_todos", "live_citations"})


def current_runtime() -> AgentRuntime | None:
    """The process runtime, or None while it is still starting."""
    try:
        return get_runtime()
    except RuntimeError:
        return None


def apply_live(state: Any, before: LiveAnswer, after: LiveAnswer) -> None:
    """Assign the ``live_*`` vars whose ``LiveAnswer`` field changed (call inside ``async with``)."""
    for name in changed_fields(before, after):
        var = LIVE_VARS.get(name)
        if var is None:
            continue
        value = getattr(after, name)
        setattr(state, var, list(value) if isinstance(value, tuple) else value)


def current_live(state: Any) -> LiveAnswer:
    """The answer the ``live_*`` vars show now (a paused answer, before it is resumed)."""
    return LiveAnswer(
        text=state.live_text,
        reasoning=state.live_reasoning,
        status=state.live_status,
        tools=tuple(state.live_tools),
        todos=tuple(state.live_todos),
        citations=tuple(state.live_citations),
        notice=state.live_notice,
        paused=bool(state.interrupt.kind),
        lang=state.lang,
    )


async def stream_run(state: Any, run: ChatRun, live: LiveAnswer) -> LiveAnswer:
    """Stream an admitted run into ``state`` starting from ``live`` (what is shown now).

    Returns:
        The final answer. A paused one is fully shown (its bubble stays on screen with
        the card); otherwise the caller commits it. Failures come back as an answer with
        ``error`` set, never as an exception; the run is always released.
    """
    shown = live

    async def on_flush(before: LiveAnswer, after: LiveAnswer) -> None:
        nonlocal shown
        async with state:
            apply_live(state, before, after)
            stop = state._stop_requested
        shown = after
        if stop:  # Stop was pressed before this run was known by its session
            run.request_stop()

    try:
        async with state:
            state.session_id = run.session_id
        final = await pump(run.events(), on_flush, live=shown)
        if final.paused:
            async with state:
                apply_live(state, shown, final)
        return final
    except Exception:
        logger.exception("showing run %s (trace %s) failed", run.run_id, run.trace_id)
        return dataclasses.replace(shown, status="", error=t(UI_FAILURE, shown.lang), error_code="ui_failure")
    finally:
        run.release()


async def run_turn(
    state: Any,
    message: str,
    user_name: str,
    session_id: str | None,
    *,
    attachments: list[str] | None = None,
    mode: str | None = None,
    new_session: bool = False,
    lang: str = DEFAULT_LANG,
    model: str | None = None,
) -> LiveAnswer:
    """Admit and stream one turn, flushing into ``state``; return the final answer.

    The message's ``#skill:`` / ``#session:`` prefixes apply as in the API. Failures come
    back as an answer with ``error`` set (shown in the bubble), never as an exception.
    ``lang`` is the UI language: the answer is worded in it, and the model is asked to
    answer in it.
    """
    runtime = current_runtime()
    if runtime is None:
        return failed_answer(t(NOT_READY, lang), "not_ready", lang)
    request = ChatRequest(
        message=message,
        user_name=user_name,
        session_id=session_id,
        attachments=list(attachments or []),
        mode=mode,
        new_session=new_session,
        lang=lang,
        model=model,
    )
    try:
        run = await start_chat(runtime, apply_prefixes(request))
    except ChatRejected as exc:
        if request.attachments:  # nothing ran: the files wait for the next message
            async with state:
                state.attachments = [*request.attachments, *state.attachments]
        return failed_answer(exc.message, exc.code, lang)
    # What `_begin` already shows.
    return await stream_run(state, run, LiveAnswer(status=t(THINKING, lang), lang=lang))


async def admit_resume(request: ResumeRequest, lang: str = DEFAULT_LANG) -> tuple[ChatRun | None, str]:
    """Admit the answer to a card: ``(run, "")``, or ``(None, sentence to show on the card)``.

    The sentence words :class:`ChatRejected`'s code in ``lang``: 409 when the pause was
    already answered or is out of date, 422 when the answer does not fit it (its own
    sentence), 429 when busy.
    """
    runtime = current_runtime()
    if runtime is None:
        return None, t(NOT_READY, lang)
    try:
        return await start_resume(runtime, request), ""
    except ChatRejected as exc:
        plain, detail = worded_error(exc.code, exc.message, lang)
        return None, f"{plain} ({detail})" if exc.code == "bad_request" and detail else plain
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


async def load_interrupt(session_id: str, user_name: str) -> ev.Interrupt | None:
    """The pause the session waits on (as its ``interrupt`` event), or None; never raises."""
    runtime = current_runtime()
    if runtime is None or not session_id:
        return None
    try:
        return await pending_interrupt(runtime, session_id, user_name)
    except ChatRejected:
        return None
    except Exception:
        logger.exception("reading the pending interrupt of session %s failed", session_id)
        return None
