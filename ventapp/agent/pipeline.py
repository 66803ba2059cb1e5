"""The one run pipeline that both sinks (API and UI) use (DESIGN.md, "The one idea").

Stages, in order:

1. admission — :func:`start_chat`: validate; de-duplicate ``request_id`` (409 with the
   original ids, even while that run still holds its slot); resolve and own the session
   (thread_id = session_id, invariant 1; 404, whatever the quota); the quota (429); take a
   gate slot (429); take the session lock (409); save the user's message; record
   the run as ``running``. Rejections raise :class:`ChatRejected` *before* anything
   streams, so the API answers with a plain HTTP status and nothing is saved. The steps a
   resumed run takes too (ownership, route, billing, slot, claim) are in
   :mod:`ventapp.agent.admission_checks`;
2. stream — ``agent.astream`` with a dict input (pitfall 6), ``stream_mode=["updates",
   "messages"]``, ``subgraphs=True`` (:mod:`ventapp.agent.chat_run`);
3. kernel — :class:`~ventapp.agent.kernel.Kernel` turns chunks into contract events;
4. sinks — the caller iterates :meth:`ChatRun.events` (SSE encoder or UI reducer);
5. finalisation — always: the answer (partial on failure, stop or disconnect) is saved,
   the run gets its final status and tokens, lock and slot are released.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from ventapp.agent.admission_checks import (
    billing_read,
    billing_refusal,
    check_billing,
    claim_session,
    owned_session,
    route_name,
    storage_unavailable_is_503,
    take_slot,
)
from ventapp.agent.chat_run import ChatRun
from ventapp.agent.coordination import CoordinationUnavailable, Held
from ventapp.agent.fork import fork_before_turn
from ventapp.agent.identity import MAX_USER_NAME_CHARS, InvalidUserName, normalize_user_name
from ventapp.agent.refusals import (
    ChatRejected,
    rejected,
    session_not_found,
    user_name_refused,
)
from ventapp.agent.run_answer import CANCELLED_MARKER
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.turn_attachments import note_for
from ventapp.agent.turn_context import TurnContext, load_turn_context
from ventapp.billing.guard import BillingRejected, RunBilling
from ventapp.db import chat_store, request_keys, session_store, turn_writes
from ventapp.db.models import SESSION_MODES
from ventapp.model_config import DEFAULT_ROUTE
from ventapp.obs.logs import new_trace_id
from ventapp.text_rules import holds_nul, invisible_character

logger = logging.getLogger(__name__)

TITLE_CHARS = 30
"""Session titles are the first message truncated to this many characters (spec 000 §六.4)."""
MAX_MESSAGE_CHARS = 100_000
MAX_REQUEST_ID_CHARS = 128

__all__ = [
    "CANCELLED_MARKER",
    "MAX_USER_NAME_CHARS",
    "ChatRejected",
    "ChatRequest",
    "ChatRun",
    "agent_input_text",
    "start_chat",
    "stop_run",
]


@dataclass
class ChatRequest:
    """One chat turn as both clients submit it. ``session_id=None`` starts a new session."""

    message: str
    user_name: str = "default"
    session_id: str | None = None
    thread_id: str | None = None
    mode: str | None = None
    request_id: str | None = None
    trace_id: str = field(default_factory=new_trace_id)
    attachments: list[str] = field(default_factory=list)
    """Virtual paths (``/workspace/uploads/<name>``) of files saved for this turn."""
    skill: str | None = None
    """A skill the user selected with ``#skill:<name>``; the agent is told to follow it."""
    new_session: bool = False
    """True when ``session_id`` is a fresh id the server side chose (an upload needs its folder
    before admission); otherwise an unknown ``session_id`` is 404 (spec 002: 会话不存在 → 404)."""
    title: str | None = None
    """A new session's title (1–200 characters); default: the message, truncated."""
    kind: str = "chat"
    """What started the run, as ``execution_runs.kind`` records it: ``chat`` or ``schedule``."""
    lang: str | None = None
    """The browser UI's language (``zh-CN`` | ``en``), a scheduled run's its schedule's: the model is
    asked to answer in it; None for API clients."""
    words_lang: str | None = None
    """The language the run's tools word their files in (figures): an API request's ``Accept-Language``,
    a schedule's; None: ``lang``, else ``zh-CN``."""
    model: str | None = None
    """A model route by name (``MODELS``); it becomes the session's route. None: the session's
    route (a new session: the main one)."""
    fork_turn: int | None = None
    """Edit-and-resend / regenerate: this message replaces the session's ``fork_turn``-th user message
    (0-based) and everything after it; the run starts from the checkpoint before it (:mod:`.fork`).
    The session's title follows an edited first message when it was that message's."""
    keep_attachments: list[str] | None = None
    """With ``fork_turn``: which of the replaced message's files the new turn keeps (None: all of them)."""


def agent_input_text(request: ChatRequest) -> str:
    """The user turn as the agent sees it: the message plus where attachments and the skill are."""
    parts = [request.message]
    if request.attachments:
        parts.append(note_for(request.attachments))
    if request.skill:
        parts.append(
            f"Use the skill '{request.skill}': read /skills/{request.skill}/SKILL.md first and follow it."
        )
    return "\n\n".join(parts)


def _title_from(message: str) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"


def _check_request(request: ChatRequest) -> None:
    if not request.message or not request.message.strip():
        raise rejected(400, "bad_request", "refusal.empty_message")
    if len(request.message) > MAX_MESSAGE_CHARS:
        raise rejected(400, "bad_request", "refusal.message_too_long", limit=MAX_MESSAGE_CHARS)
    if holds_nul(request.message):  # PostgreSQL cannot store it; SQLite must not take what it refuses
        raise rejected(400, "bad_request", "refusal.nul_character.message")
    try:
        if normalize_user_name(request.user_name) != request.user_name:
            raise InvalidUserName(
                "user_name must be given in its normalised form (see ventapp.agent.identity)."
            )
    except InvalidUserName as exc:
        raise user_name_refused(exc) from None
    if request.request_id is not None and not (0 < len(request.request_id) <= MAX_REQUEST_ID_CHARS):
        raise rejected(400, "bad_request", "refusal.request_id", limit=MAX_REQUEST_ID_CHARS)
    if request.request_id is not None and invisible_character(request.request_id) is not None:
        raise rejected(400, "bad_request", "refusal.request_id_invisible")  # stored: PostgreSQL refuses NUL
    if request.mode is not None and request.mode not in SESSION_MODES:
        raise rejected(422, "bad_request", "refusal.mode")
    if request.thread_id and request.thread_id != request.session_id:
        # Invariant 1: a client-chosen thread would read or write another session's graph state.
        raise session_not_found()


def _duplicate(record: Any) -> ChatRejected:
    return rejected(
        409,
        "duplicate_request",
        "refusal.duplicate_request",
        details={"session_id": record.session_id, "run_id": record.run_id},
    )


async def _nothing() -> None:
    return None


async def _earlier_request(runtime: AgentRuntime, request: ChatRequest) -> Any:
    """The stored record of the request's ``request_id`` (a repeat), or None."""
    if not request.request_id:
        return None
    return await asyncio.to_thread(
        request_keys.find_request_key, runtime.engine, request.user_name, request.request_id
    )


async def _own_session(runtime: AgentRuntime, request: ChatRequest) -> tuple[str, Any]:
    """The session id to use and its row (None if new); 404 for bad ids and foreign sessions."""
    if not request.session_id:
        return str(uuid.uuid4()), None
    try:
        session_id = str(uuid.UUID(request.session_id))
    except ValueError:
        raise session_not_found() from None
    session = await asyncio.to_thread(chat_store.get_session, runtime.engine, session_id)
    if session is None and not request.new_session:
        raise session_not_found()
    if session is not None and session.user_name != request.user_name:
        raise session_not_found()
    return session_id, session


@storage_unavailable_is_503
async def start_chat(runtime: AgentRuntime, request: ChatRequest) -> ChatRun:
    """Admit one chat turn (stage 1). The returned run must be iterated or released.

    Raises:
        ChatRejected: 400 (blank message, bad user name or request_id), 404 (bad id, another
            user's session, thread_id ≠ session_id), 409 (duplicate request_id, session already
            running; ``no_turn``: ``fork_turn`` names no message), 422 (bad mode), 429 (process or user run limit, daily quota; ``retry_after``
            set), 400 ``unknown_model`` (a model route that is not configured), 503 (the model
            has no price and BILLING_ALLOW_UNPRICED=0; ``storage``: the
            database refuses writes).
    """
    _check_request(request)
    engine = runtime.engine
    route = route_name(runtime, request.model)
    # A new session's only read before the slot is the quota's: it goes with the turn's writes, in
    # one worker-thread hop (issue 18; a full gate is then heard before a used-up quota).
    deferred = not request.session_id and not request.request_id
    # The three reads go together (one wait instead of three); their refusals keep their order.
    earlier, billing, owned = await asyncio.gather(
        _earlier_request(runtime, request),
        _nothing() if deferred else check_billing(runtime, request.user_name, route),
        _own_session(runtime, request),
        return_exceptions=True,
    )
    if isinstance(earlier, BaseException):
        raise earlier
    if earlier is not None:
        # Before quota and gate: a repeat of a run that is still going holds a slot itself,
        # and must hear "already submitted" (409), not "too many runs" (429).
        raise _duplicate(earlier)
    if isinstance(owned, BaseException):
        # Before quota and gate: a missing (or another user's) session is 404 whatever the quota,
        # as in a resume (admission_checks); a 429 would tell an id that exists from one that doesn't.
        raise owned
    if isinstance(billing, BaseException):
        raise billing
    slot = await take_slot(runtime, request.user_name)
    lock: asyncio.Lock | None = None
    claim: Held | None = None
    try:
        session_id, session = owned
        if session is not None and not request.model and (session.route or DEFAULT_ROUTE) != route:
            route = route_name(runtime, None, session.route)
            # The session's route: its own price (and the quota read again, rarely).
            billing = await check_billing(runtime, request.user_name, route)
        lock = runtime.session_lock(session_id)
        if lock.locked():
            lock = None
            raise rejected(409, "busy", "refusal.session_busy")
        await lock.acquire()
        claim = await claim_session(runtime, session_id)
        run_id = str(uuid.uuid4())
        if request.request_id:
            taken = await asyncio.to_thread(
                request_keys.claim_request_key,
                engine,
                request.user_name,
                request.request_id,
                session_id,
                run_id,
                runtime.settings.request_key_ttl_s,
            )
            if taken is not None:
                raise _duplicate(taken)
        if request.fork_turn is not None and session is not None:
            graph = (await runtime.agents.ready(route)).graph
            cut = await fork_before_turn(engine, graph, session_id, request.fork_turn)
            if cut is None:
                raise rejected(409, "no_turn", "refusal.no_turn")
            replaced, kept = cut
            if request.keep_attachments is not None:
                kept = [path for path in kept if path in request.keep_attachments]
            # The edited (or regenerated) turn keeps the files the replaced one carried.
            request = replace(
                request, attachments=[*kept, *(p for p in request.attachments if p not in kept)]
            )
            if request.fork_turn == 0 and session.title == _title_from(replaced):
                title = _title_from(request.message)
                await asyncio.to_thread(
                    session_store.update_session, engine, session_id, request.user_name, title=title
                )
        stored_route = None if route == DEFAULT_ROUTE else route
        open_turn = functools.partial(
            turn_writes.open_turn,
            engine,
            session_id=session_id,
            run_id=run_id,
            user_name=request.user_name,
            trace_id=request.trace_id,
            kind=request.kind,
            message=request.message,
            attachments=request.attachments,
            new_session=(request.title or _title_from(request.message), request.mode or "full", stored_route)
            if session is None
            else None,
            set_route=(stored_route,)
            if session is not None and request.model and (session.route or DEFAULT_ROUTE) != route
            else None,
        )

        read_billing = billing_read(runtime, request.user_name, route) if deferred else None

        def open_and_read() -> tuple[RunBilling | None, TurnContext | None]:
            # The quota read (a new session's), one transaction for the session, the message and
            # the run record, then the user's standing context, in one worker-thread hop (issue 18:
            # under load each hop costs the event loop more than the read itself).
            checked = read_billing() if read_billing is not None else billing
            open_turn()
            try:
                return checked, load_turn_context(engine, request.user_name, session_id)
            except Exception:
                return checked, None  # the run reads it again when it starts, where a failure is reported

        try:
            billing, turn = await asyncio.to_thread(open_and_read)
        except BillingRejected as refused:
            raise billing_refusal(refused) from None
        agent = await runtime.agents.ready(route)
    except BaseException:
        if claim is not None:
            claim.release()
        if lock is not None:
            lock.release()
        slot.release()
        raise

    def release() -> None:
        runtime.active_runs.pop(session_id, None)
        claim.release()
        lock.release()
        slot.release()

    run = ChatRun(
        runtime,
        session_id=session_id,
        run_id=run_id,
        trace_id=request.trace_id,
        user_name=request.user_name,
        graph_input={"messages": [{"role": "user", "content": agent_input_text(request)}]},
        on_release=release,
        mode=request.mode or (session.mode if session is not None else "full"),
        lang=request.lang,
        words_lang=request.words_lang,
        agent=agent,
        billing=billing,
        turn=turn,
    )
    runtime.active_runs[session_id] = run
    return run


async def stop_run(runtime: AgentRuntime, session_id: str, user_name: str) -> bool:
    """Stop the session's active run (Stop button, ``POST /api/chat/stop``).

    Returns:
        True when a run was streaming and is now stopping; False when none was active.

    Raises:
        ChatRejected: 404 when the session is not the user's.
    """
    session = await owned_session(runtime, session_id, user_name)
    run = runtime.active_runs.get(session.id)
    if run is not None:
        return run.request_stop()
    try:  # another process may be running it: its owner stops it on the broadcast
        return await runtime.coordination.broadcast_stop(session.id)
    except CoordinationUnavailable:
        raise rejected(503, "coordination_unavailable", "refusal.coordination_down", retry_after=5) from None
