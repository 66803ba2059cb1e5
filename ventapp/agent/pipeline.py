"""The one run pipeline that both sinks (API and UI) use (DESIGN.md, "The one idea").

Stages, in order:

1. admission — :func:`start_chat` validates the request, resolves and owns the
   session (thread_id = session_id, invariant 1), takes the session lock, saves the
   user's message and records the run as ``running``. Rejections raise
   :class:`ChatRejected` *before* anything streams, so the API can answer with a
   plain HTTP status;
2. stream — ``agent.astream`` with a dict input (pitfall 6) and
   ``stream_mode=["updates", "messages"]``, ``subgraphs=True``;
3. kernel — :class:`~ventapp.agent.kernel.Kernel` turns chunks into contract events;
4. sinks — the caller iterates :meth:`ChatRun.events` (SSE encoder or UI reducer);
5. finalisation — always, in ``finally``: the answer (partial on failure or
   cancellation) is saved, the run gets its final status and token counts, the
   lock is released.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ventapp.agent import events as ev
from ventapp.agent.errors import UNCONFIGURED, RunFailure, classify
from ventapp.agent.kernel import MAIN_AGENT, MAIN_AGENT_LABEL, Kernel
from ventapp.agent.runtime import AgentRuntime
from ventapp.db import chat_store
from ventapp.db.models import SESSION_MODES
from ventapp.obs.logs import new_trace_id

logger = logging.getLogger(__name__)

TITLE_CHARS = 30
"""Session titles are the first message truncated to this many characters (spec 000 §六.4)."""
MAX_MESSAGE_CHARS = 100_000
MAX_USER_NAME_CHARS = 128
CANCELLED_MARKER = "\n\n[stopped]"


class ChatRejected(Exception):
    """Admission refused the request; nothing ran and nothing was saved.

    Attributes:
        status: The HTTP status an API should answer with (400, 404, 409, 422).
        code: A machine-readable code.
        message: A sentence for people.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass
class ChatRequest:
    """One chat turn as both clients submit it. ``session_id=None`` starts a new session."""

    message: str
    user_name: str = "default"
    session_id: str | None = None
    thread_id: str | None = None
    mode: str | None = None
    trace_id: str = field(default_factory=new_trace_id)
    attachments: list[str] = field(default_factory=list)
    """Virtual paths (``/workspace/uploads/<name>``) of files saved for this turn."""
    skill: str | None = None
    """A skill the user selected with ``#skill:<name>``; the agent is told to follow it."""


def agent_input_text(request: ChatRequest) -> str:
    """The user turn as the agent sees it: the message plus where attachments and the skill are."""
    parts = [request.message]
    if request.attachments:
        parts.append("Attached files (read them with read_file): " + ", ".join(request.attachments))
    if request.skill:
        parts.append(f"Use the skill '{request.skill}': read /skills/{request.skill}/SKILL.md first and follow it.")
    return "\n\n".join(parts)


def _title_from(message: str) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"


def _check_request(request: ChatRequest) -> None:
    if not request.message or not request.message.strip():
        raise ChatRejected(400, "bad_request", "The message is empty. Type something to send.")
    if len(request.message) > MAX_MESSAGE_CHARS:
        raise ChatRejected(400, "bad_request", f"The message is longer than {MAX_MESSAGE_CHARS} characters.")
    name = request.user_name
    if not name or len(name) > MAX_USER_NAME_CHARS or any(ch.isspace() and ch != " " for ch in name):
        raise ChatRejected(400, "bad_request", "user_name must be 1–128 characters without line breaks.")
    if request.mode is not None and request.mode not in SESSION_MODES:
        raise ChatRejected(422, "bad_request", "mode must be 'plan' or 'full'.")
    if request.thread_id and request.thread_id != request.session_id:
        # Invariant 1: a client-chosen thread would read or write another session's graph state.
        raise ChatRejected(404, "not_found", "Session not found.")


async def start_chat(runtime: AgentRuntime, request: ChatRequest) -> ChatRun:
    """Admit one chat turn (stage 1). The returned run must be iterated or released.

    Raises:
        ChatRejected: 400 (blank message, bad user name), 404 (unknown id format, another
            user's session, thread_id ≠ session_id), 409 (a run of this session is active),
            422 (bad mode).
    """
    _check_request(request)
    engine = runtime.engine
    session_id = request.session_id
    if session_id:
        try:
            session_id = str(uuid.UUID(session_id))
        except ValueError:
            raise ChatRejected(404, "not_found", "Session not found.") from None
        session = await asyncio.to_thread(chat_store.get_session, engine, session_id)
        if session is not None and session.user_name != request.user_name:
            raise ChatRejected(404, "not_found", "Session not found.")
    else:
        session_id, session = str(uuid.uuid4()), None

    lock = runtime.session_lock(session_id)
    if lock.locked():
        raise ChatRejected(409, "busy", "This session is already answering. Wait for it to finish.")
    await lock.acquire()
    try:
        if session is None:
            await asyncio.to_thread(
                chat_store.create_session,
                engine,
                session_id,
                request.user_name,
                _title_from(request.message),
                request.mode or "full",
            )
        await asyncio.to_thread(chat_store.add_message, engine, session_id, "user", request.message)
        run_id = str(uuid.uuid4())
        await asyncio.to_thread(
            chat_store.start_run, engine, run_id, session_id, request.user_name, request.trace_id, "chat"
        )
    except BaseException:
        lock.release()
        raise
    return ChatRun(runtime, request, session_id, run_id, lock)


class ChatRun:
    """An admitted run: iterate :meth:`events` once; :meth:`release` if you never do."""

    def __init__(
        self, runtime: AgentRuntime, request: ChatRequest, session_id: str, run_id: str, lock: asyncio.Lock
    ) -> None:
        self.runtime = runtime
        self.request = request
        self.session_id = session_id
        self.run_id = run_id
        self.trace_id = request.trace_id
        self.user_name = request.user_name
        self._lock = lock
        self._started = False
        self._finalised = False

    def release(self) -> None:
        """Free the session lock of a run whose events were never iterated (idempotent)."""
        if not self._started and self._lock.locked():
            self._lock.release()

    async def events(self) -> AsyncIterator[ev.ContractEvent]:
        """Stages 2–5: stream the agent and yield contract events; finalise whatever happens.

        Ends with ``done`` on success, ``error`` on failure, nothing after an
        ``interrupt`` (the run waits for input). Cancellation (client gone, task
        cancelled) finalises the run as ``cancelled`` with the partial answer saved.
        """
        if self._started:
            raise RuntimeError("ChatRun.events() can be iterated only once")
        self._started = True
        settings = self.runtime.settings
        kernel = Kernel(context_limit=settings.context_limit)
        started = time.monotonic()
        first_token_ms: int | None = None
        failure: RunFailure | None = None
        status = "cancelled"
        try:
            yield ev.AgentStart(agent=MAIN_AGENT, cn_agent=MAIN_AGENT_LABEL)
            yield ev.Thinking(message="正在思考…", cn_agent=MAIN_AGENT_LABEL)
            if not settings.model_configured:
                failure = UNCONFIGURED
            else:
                try:
                    async for event in kernel.run(self._graph_stream()):
                        if first_token_ms is None and event.type == "token":
                            first_token_ms = int((time.monotonic() - started) * 1000)
                        yield event
                except Exception as exc:  # every failure becomes an error frame, never a silent end
                    failure = classify(exc)
                    logger.warning("run %s (trace %s) failed: %r", self.run_id, self.trace_id, exc)
            transcript = kernel.transcript
            if failure is not None:
                status = "failed"
                yield ev.Error(message=failure.message, code=failure.code)
            elif transcript.interrupt is not None:
                status = "waiting_input"
            else:
                status = "success"
                if not transcript.sources.items:
                    yield ev.Citations(items=[], model_only=True)
                duration_ms = int((time.monotonic() - started) * 1000)
                usage = transcript.meter.usage()
                yield ev.AgentDone(
                    agent=MAIN_AGENT,
                    cn_agent=MAIN_AGENT_LABEL,
                    duration_ms=duration_ms,
                    context_tokens=usage.context_tokens,
                )
                yield ev.Done(duration_ms=duration_ms, usage=usage, run_id=self.run_id)
        finally:
            # Shielded: a cancelled consumer must still leave the run recorded and the lock free.
            await asyncio.shield(self._finalise(kernel, status, failure, first_token_ms))

    def _graph_stream(self) -> AsyncIterator[Any]:
        config = {
            "configurable": {"thread_id": self.session_id},
            "metadata": {"run_id": self.run_id, "trace_id": self.trace_id, "user_name": self.user_name},
            "recursion_limit": 200,
        }
        return self.runtime.agent.astream(
            {"messages": [{"role": "user", "content": agent_input_text(self.request)}]},
            config=config,
            stream_mode=["updates", "messages"],
            subgraphs=True,
        )

    async def _finalise(
        self, kernel: Kernel, status: str, failure: RunFailure | None, first_token_ms: int | None
    ) -> None:
        if self._finalised:
            return
        self._finalised = True
        transcript = kernel.transcript
        usage = transcript.meter.usage()
        engine = self.runtime.engine
        try:
            answer = transcript.answer
            if status == "cancelled" and answer:
                answer += CANCELLED_MARKER
            if answer or transcript.tool_cards or status in ("failed", "cancelled"):
                await asyncio.to_thread(
                    chat_store.add_message,
                    engine,
                    self.session_id,
                    "assistant",
                    answer,
                    run_id=self.run_id,
                    tool_calls=[card.to_dict() for card in transcript.tool_cards.values()],
                    citations=[item.model_dump(mode="json") for item in transcript.sources.items],
                    usage=usage.model_dump(mode="json"),
                    status={"success": "complete", "waiting_input": "waiting"}.get(status, status),
                )
            await asyncio.to_thread(
                chat_store.finish_run,
                engine,
                self.run_id,
                status,
                error=failure.message if failure else None,
                error_code=failure.code if failure else None,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                first_token_ms=first_token_ms,
            )
        except Exception:
            logger.exception("could not finalise run %s (trace %s)", self.run_id, self.trace_id)
        finally:
            self._lock.release()
