"""Resuming a paused run, and reading what it waits for (spec 002, "Agent 人机交互").

:func:`start_resume` admits like :func:`~ventapp.agent.pipeline.start_chat` (ownership 404,
gate 429, session lock 409) and then, *under the session lock*, compares the client's
``interrupt_token`` with the interrupt pending in the checkpoint: missing, stale or already
used → 409 and nothing runs. The run continues the same checkpoint with
``Command(resume={interrupt_id: value})`` and the same run record, streaming the rest
with the same contract.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.types import Command

from ventapp.agent import events as ev
from ventapp.agent.admission_checks import (
    check_billing,
    claim_session,
    owned_session,
    route_name,
    storage_unavailable_is_503,
    take_slot,
)
from ventapp.agent.chat_run import ChatRun
from ventapp.agent.interrupts import (
    ResumeAnswer,
    ResumeInvalid,
    open_calls_of,
    remembered,
    resume_value,
    to_event,
    unique,
)
from ventapp.agent.pipeline import ChatRejected
from ventapp.agent.refusals import rejected
from ventapp.agent.runtime import AgentRuntime
from ventapp.db import chat_store, preference_store
from ventapp.obs.logs import new_trace_id
from ventapp.text_rules import holds_nul


@dataclass
class ResumeRequest:
    """The client's answer to an ``interrupt`` frame."""

    session_id: str
    interrupt_token: str
    user_name: str = "default"
    answer: ResumeAnswer = field(default_factory=ResumeAnswer)
    trace_id: str = field(default_factory=new_trace_id)
    lang: str | None = None
    """The browser UI's language, as on :class:`~ventapp.agent.pipeline.ChatRequest`."""
    words_lang: str | None = None
    """The language the run's tools word their files in, as on :class:`~ventapp.agent.pipeline.ChatRequest`."""


async def _pending(runtime: AgentRuntime, session_id: str) -> tuple[list[Any], Any]:
    snapshot = await runtime.agent.aget_state({"configurable": {"thread_id": session_id}})
    return unique(snapshot.interrupts), snapshot


def _last_ai(snapshot: Any) -> AIMessage | None:
    messages = (snapshot.values or {}).get("messages", [])
    return next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)


def _open_calls(saved: Any, snapshot: Any) -> list[dict[str, Any]]:
    # The paused answer's cards hold every agent's calls (a sub-agent's are not in the main
    # thread's messages); a pause saved without cards falls back to the last main-thread call.
    cards = [card for card in (saved.tool_calls if saved is not None else []) if card.get("content") is None]
    if cards:
        return [{"id": c["tool_call_id"], "name": c.get("tool"), "args": c.get("args") or {}} for c in cards]
    return open_calls_of(_last_ai(snapshot))


def _edited_args(event: ev.Interrupt, value: Any) -> dict[str, dict[str, Any]]:
    """``tool_call_id -> args`` of the calls a reviewer edited, matched as the card named them."""
    decisions = value.get("decisions", []) if isinstance(value, dict) else []
    return {
        call_id: dict(decision["edited_action"]["args"])
        for call_id, decision in zip(event.tool_call_ids, decisions, strict=False)
        if decision.get("type") == "edit" and call_id
    }


def _reviews(event: ev.Interrupt, value: Any) -> dict[str, str]:
    """``tool_call_id -> approve | edit | reject``: what the reviewer decided on each call of the card."""
    decisions = value.get("decisions", []) if isinstance(value, dict) else []
    return {
        call_id: str(decision.get("type") or "")
        for call_id, decision in zip(event.tool_call_ids, decisions, strict=False)
        if call_id
    }


async def pending_interrupt(runtime: AgentRuntime, session_id: str, user_name: str) -> ev.Interrupt | None:
    """The interrupt the session waits on (same shape as the frame), or None.

    Raises:
        ChatRejected: 404 when the session is not the user's.
    """
    session = await owned_session(runtime, session_id, user_name)
    pending, snapshot = await _pending(runtime, session.id)
    if not pending:
        return None
    saved = await asyncio.to_thread(chat_store.waiting_answer, runtime.engine, session.id)
    return to_event(pending[0], _open_calls(saved, snapshot))


def invalid_answer(invalid: ResumeInvalid) -> ChatRejected:
    """422 ``bad_request`` for an answer that does not fit the pending interrupt.

    Worded by the problem's catalogue id like every fixed refusal (``message`` per
    ``Accept-Language``, ``detail`` English); ``errors[].loc`` points at the body part at fault
    (``["body", "decisions", 0, "args"]``), as FastAPI's own 422s do.
    """
    refused = rejected(422, "bad_request", invalid.key, **invalid.params)
    refused.details = {"errors": [{"type": "bad_request", "loc": invalid.loc, "msg": refused.message}]}
    return refused


@storage_unavailable_is_503
async def start_resume(runtime: AgentRuntime, request: ResumeRequest) -> ChatRun:
    """Admit a resume; the returned run must be iterated or released.

    Raises:
        ChatRejected: 404 (not the user's session), 409 (session busy, no pending interrupt,
            stale or already used token), 422 (answer does not fit the interrupt), 429 (gate),
            503 (the database refuses writes); 400 an answer holding NUL (U+0000).
    """
    answer = request.answer
    if holds_nul([answer.answers, answer.feedback, answer.decisions]):
        raise rejected(400, "bad_request", "refusal.nul_character.answer")
    session = await owned_session(runtime, request.session_id, request.user_name)
    route = route_name(runtime, None, session.route)  # the session's route, like its chats
    billing = await check_billing(runtime, request.user_name, route)
    slot = await take_slot(runtime, request.user_name)
    lock = runtime.session_lock(session.id)
    if lock.locked():
        slot.release()
        raise rejected(409, "busy", "refusal.session_busy_resume")
    await lock.acquire()
    try:
        claim = await claim_session(runtime, session.id)
    except BaseException:
        lock.release()
        slot.release()
        raise
    try:
        pending, snapshot = await _pending(runtime, session.id)
        if not pending:
            raise rejected(409, "no_interrupt", "refusal.no_interrupt")
        current = pending[0]
        if request.interrupt_token != str(current.id):
            raise rejected(409, "stale_interrupt", "refusal.stale_interrupt")
        try:
            value = resume_value(current, request.answer)
            rules = remembered(current, request.answer)
        except ResumeInvalid as invalid:
            raise invalid_answer(invalid) from None
        reopened = await asyncio.to_thread(chat_store.reopen_waiting_run, runtime.engine, session.id)
        run_id, numbered_after = reopened if reopened is not None else (None, 0)
        paused = await asyncio.to_thread(chat_store.run_answer, runtime.engine, run_id) if run_id else None
        answered = to_event(current, _open_calls(paused, snapshot))
        edited_args = _edited_args(answered, value)
        for tool, scope in rules:
            # The answered calls are excluded: the framework asks its predicate again for them.
            await asyncio.to_thread(
                preference_store.add_rule,
                runtime.engine,
                request.user_name,
                tool,
                scope,
                session.id,
                answered.tool_call_ids,
            )
        if run_id is None:
            run_id = str(uuid.uuid4())
            await asyncio.to_thread(
                chat_store.start_run,
                runtime.engine,
                run_id,
                session.id,
                request.user_name,
                request.trace_id,
                "resume",
            )
        agent = await runtime.agents.ready(route)
    except BaseException:
        claim.release()
        lock.release()
        slot.release()
        raise

    def release() -> None:
        runtime.active_runs.pop(session.id, None)
        claim.release()
        lock.release()
        slot.release()

    counted = {m.id for m in (snapshot.values or {}).get("messages", []) if isinstance(m, AIMessage) and m.id}
    run = ChatRun(
        runtime,
        session_id=session.id,
        run_id=run_id,
        trace_id=request.trace_id,
        user_name=request.user_name,
        graph_input=Command(resume={current.id: value}),
        on_release=release,
        mode=session.mode,
        counted_message_ids=counted,
        prior_usage=dict(paused.usage or {}) if paused is not None else {},
        prior_cards=list(paused.tool_calls or []) if paused is not None else [],
        edited_args=edited_args,
        lang=request.lang,
        words_lang=request.words_lang,
        agent=agent,
        billing=billing,
    )
    run.numbered_after = numbered_after
    run.kernel.mark_reviews(_reviews(answered, value))
    runtime.active_runs[session.id] = run
    return run
