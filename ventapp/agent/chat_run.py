"""An admitted run: stages 2–5 of the pipeline (stream → kernel → sinks → finalisation).

The graph is consumed by a *producer* task that feeds a queue; the sink iterates
:meth:`ChatRun.events`. The split is what makes stopping reliable: a stop, a timeout or a
departed client cancels the producer, which cancels the graph (and its in-flight model
request) at once — no further model calls — while the consumer still finalises.

Durability (issue 17): each model call's usage is settled when the call ends (ledger id
``<run_id>:<call>``, so settling again is harmless; :mod:`~ventapp.agent.run_settlement`), and
the answer so far is saved every ``ANSWER_SAVE_INTERVAL_S`` while it streams, both off the hot
path in background tasks;
a crash loses at most that interval. The closing frame is sent only after the answer and
the run status are saved; when the database refuses them they are parked in the spool
file (:mod:`ventapp.agent.writeback`) and the run ends with ``error`` code ``storage``. What is
saved or parked (the priced usage, the answer record) is built by :mod:`~ventapp.agent.run_answer`.

Per-token and per-call cost (issue 18): no database read happens while the run streams —
the quota between calls is checked against the reservation the admission read
(:class:`~ventapp.billing.guard.QuotaReservation`); token events already waiting when the
consumer (the run's log writer) asks for the next one are joined into one ``token`` event,
so one log frame and one ``seq`` (a lone token is never held back; :mod:`~ventapp.agent.run_queue`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.utils import count_tokens_approximately

from ventapp.agent import events as ev
from ventapp.agent.agent_set import BuiltAgent
from ventapp.agent.context_meter import InternalCallMeter
from ventapp.agent.errors import (
    CANCELLED,
    QUOTA_REACHED,
    STORAGE_FAILED,
    TIMED_OUT,
    UNCONFIGURED,
    RunFailure,
    classify,
)
from ventapp.agent.kernel import MAIN_AGENT, MAIN_AGENT_LABEL, Kernel
from ventapp.agent.middleware import UI_LANG_KEY, WORDS_LANG_KEY
from ventapp.agent.run_answer import (
    answer_so_far,
    as_ended,
    final_record,
    parked_record,
    priced,
    whole_answer,
)
from ventapp.agent.run_queue import RunQueue
from ventapp.agent.run_settlement import CallSettler
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.stopped_tools import record_cut_turn
from ventapp.agent.turn_context import TurnContext, load_turn_context
from ventapp.agent.workspace_links import workspace_links
from ventapp.agent.writeback import park_run
from ventapp.billing.guard import RunBilling, read_billing
from ventapp.billing.pricing import Price
from ventapp.billing.settlement import SettleResult
from ventapp.db import turn_writes

logger = logging.getLogger(__name__)

THINKING_MESSAGE = "正在思考…"
"""The status line a run opens with (the API words it per request: :mod:`ventapp.api.wording`)."""

_END = object()


def _released() -> None:
    """Stands in for a run's release callback once it ran."""


class ChatRun:
    """One admitted run. Iterate :meth:`events` once; :meth:`release` if you never do.

    Args:
        runtime: The process runtime.
        session_id: The session (= thread_id, invariant 1).
        run_id: The ``execution_runs`` row, already ``running``.
        trace_id: Correlates logs and frames.
        user_name: The owner.
        graph_input: ``{"messages": [...]}`` (always a dict, pitfall 6) or a ``Command``.
        on_release: Frees the session lock and gate slot; called exactly once.
        mode: The session's mode (``full`` | ``plan``), passed to the graph's config.
        counted_message_ids: Model calls already settled by the run this one resumes.
        prior_usage: The paused part's saved usage; ``done`` reports the whole answer's.
        prior_cards: The paused part's saved tool cards (their agents, the paused ``task``).
        edited_args: ``tool_call_id -> args`` of calls a reviewer edited before they ran.
        lang: The browser UI's language (``zh-CN`` | ``en``) the model is asked to answer in; None
            for API clients.
        words_lang: The language of the words the run's tools draw into files (the network
            solver's figures): an API request's ``Accept-Language``, a schedule's; None: ``lang``,
            else ``zh-CN``.
        agent: The agent to run on (default: the main route's current one). Captured here, so a
            thinking switch or a reload while the run streams does not change it (issue 10).
        billing: The price and quota reservation the admission read; read at start if None.
        turn: The user's preferences and approval rules; read at start if None.
    """

    numbered_after = 0
    """A resumed run: the ``seq`` its paused part ended at, as kept with the run (0: unknown)."""

    def __init__(
        self,
        runtime: AgentRuntime,
        *,
        session_id: str,
        run_id: str,
        trace_id: str,
        user_name: str,
        graph_input: Any,
        on_release: Callable[[], None],
        mode: str = "full",
        counted_message_ids: set[str] | None = None,
        prior_usage: dict[str, Any] | None = None,
        prior_cards: list[dict[str, Any]] | None = None,
        edited_args: dict[str, dict[str, Any]] | None = None,
        lang: str | None = None,
        words_lang: str | None = None,
        agent: BuiltAgent | None = None,
        billing: RunBilling | None = None,
        turn: TurnContext | None = None,
    ) -> None:
        self.runtime = runtime
        self.agent = agent or runtime.agents.get()
        """The agent, route and billed model this run keeps to its end."""
        self.session_id = session_id
        self.run_id = run_id
        self.trace_id = trace_id
        self.user_name = user_name
        self._graph_input = graph_input
        self._on_release = on_release
        self._started = False
        self._released = False
        self._queue = RunQueue()
        self._producer: asyncio.Task[None] | None = None
        self._stop: RunFailure | None = None
        self.mode = mode
        self.lang = lang
        self.words_lang = words_lang or lang
        self._prior_usage = prior_usage or {}
        self._billing = billing
        self._price: Price | None = billing.price if billing is not None else None
        self._turn_given = turn is not None
        self._turn = turn or TurnContext()
        # Input of a first call cut before its usage arrived: the turn's text, offline estimate.
        self._input_estimate = (
            count_tokens_approximately([graph_input["messages"][-1]]) if isinstance(graph_input, dict) else 0
        )
        self.kernel = Kernel(
            context_limit=self.agent.route.context_limit,
            prior_cards=prior_cards or (),
            edited_args=edited_args,
        )
        self.kernel.transcript.meter.already_counted(counted_message_ids or set())
        self._settler = CallSettler(
            runtime,
            run_id=run_id,
            session_id=session_id,
            user_name=user_name,
            model=self.agent.model,
            trace_id=trace_id,
        )
        self._saved_size = 0  # of the answer when the partial-answer saver last took it
        self._finalising: asyncio.Task[bool] | None = None
        self._stored_duration_ms: int | None = None  # what the final save stored, once it did
        self._stored_usage: ev.Usage | None = None  # the usage of the answer it kept, if it kept one
        self._stored_content = ""  # the text the final save kept ("" for none)

    def release(self) -> None:
        """Free the lock and slot of a run whose events were never iterated (idempotent)."""
        if not self._started:
            self._release_once()

    def request_stop(self, failure: RunFailure = CANCELLED) -> bool:
        """Stop the run from outside (Stop button, ``POST /api/chat/stop``, timeout).

        A stop that comes before the graph started (a client that leaves at once, a tab's
        Stop during admission) is kept, and the graph then never starts.

        Returns:
            True when the run was still going and is now stopping; False when it had
            stopped, finished, or was released without running.
        """
        if self._stop is not None or self._finalising is not None or self._released:
            return False
        if self._producer is not None and self._producer.done():
            return False
        self._stop = failure
        if self._producer is not None:
            self._producer.cancel()
        self._queue.put_nowait(_END)
        return True

    async def events(self) -> AsyncIterator[ev.ContractEvent]:
        """Yield the run's contract events; finalise whatever happens.

        Ends with ``done`` on success, ``error`` on failure, stop or timeout (codes
        ``cancelled``/``timeout``), nothing after an ``interrupt``. The closing frame comes
        only after the answer and the run status are saved; when the database refused them
        (they are parked in the spool, written back later) it is ``error`` code ``storage``.
        ``done.duration_ms`` is the run's stored duration, the agent's working time without any
        wait for an approval (and ``agent_done`` and a saved failure's ``error`` carry it, the
        latter with the kept answer's usage), so the streaming tab's footer reads as a re-read does.
        Nothing slow follows the closing frame. A consumer that goes away (client disconnect,
        task cancelled) leaves the run ``cancelled`` with its partial answer saved.
        """
        if self._started:
            raise RuntimeError("ChatRun.events() can be iterated only once")
        self._started = True
        settings = self.runtime.settings
        started = time.monotonic()
        first_token_ms: int | None = None
        failure: RunFailure | None = None
        status = "cancelled"
        timer = asyncio.get_running_loop().call_later(settings.run_timeout_s, self.request_stop, TIMED_OUT)
        try:
            yield ev.AgentStart(agent=MAIN_AGENT, cn_agent=MAIN_AGENT_LABEL)
            yield ev.Thinking(message=THINKING_MESSAGE, cn_agent=MAIN_AGENT_LABEL)
            if not self.agent.route.configured:
                failure = UNCONFIGURED
            else:
                if self._billing is None or not self._turn_given:
                    await asyncio.to_thread(self._load_context)
                self.kernel.approved_by_rule = self._turn.approved_by_rule
                if self._stop is None:  # stopped while admitted: the graph never starts
                    self.runtime.partials.watch(self.run_id, self._partial_if_grown)
                    self._producer = asyncio.create_task(self._produce(), name=f"run-{self.run_id}")
                while (item := await self._queue.next()) is not _END:
                    if isinstance(item, RunFailure):
                        failure = item
                        break
                    if first_token_ms is None and item.type == "token":
                        first_token_ms = int((time.monotonic() - started) * 1000)
                    yield item
                failure = failure or self._stop
            transcript = self.kernel.transcript
            closing: ev.ContractEvent | None = None
            agent_done: ev.AgentDone | None = None  # after the save: it carries the stored duration
            if failure is not None:
                status = "cancelled" if failure.code == "cancelled" else "failed"
                failure = as_ended(failure, transcript)
                closing = ev.Error(message=failure.message, code=failure.code)
            elif transcript.interrupt is not None:
                status = "waiting_input"
            else:
                status = "success"
                if not transcript.sources.items:
                    yield ev.Citations(items=[], model_only=True)
                duration_ms = int((time.monotonic() - started) * 1000)
                usage = self._whole_answer(self._priced(transcript.meter.usage()))
                agent_done = ev.AgentDone(
                    agent=MAIN_AGENT,
                    cn_agent=MAIN_AGENT_LABEL,
                    duration_ms=duration_ms,
                    context_tokens=usage.context_tokens,
                )
                closing = ev.Done(duration_ms=duration_ms, usage=usage, run_id=self.run_id)
            # `done` promises a saved answer: save first, and say so when it could not be.
            saved = await self._finalise_once(status, failure, first_token_ms)
            if not saved and status != "waiting_input":
                closing = ev.Error(message=STORAGE_FAILED.message, code=STORAGE_FAILED.code)
            elif closing is not None and self._stored_duration_ms is not None:
                # The stored figures, not this clock: a tab re-reading the session shows those, and
                # a resumed run's clock saw only its last part (the store adds the paused parts).
                update: dict[str, Any] = {"duration_ms": self._stored_duration_ms}
                if isinstance(closing, ev.Error) and self._stored_usage is not None:
                    update["usage"] = self._whole_answer(self._stored_usage)
                if isinstance(closing, ev.Done):  # the saved text's files, as the history lists them
                    update["workspace_links"] = workspace_links(self.session_id, self._stored_content)
                closing = closing.model_copy(update=update)
                if agent_done is not None:
                    agent_done = agent_done.model_copy(update={"duration_ms": self._stored_duration_ms})
            if agent_done is not None:
                yield agent_done
            if closing is not None:
                yield closing
        finally:
            timer.cancel()
            # A consumer that left early (disconnect, cancelled task) still leaves the run recorded.
            try:
                await self._finalise_once(status, failure, first_token_ms)
            except Exception:
                logger.exception("could not finalise run %s (trace %s)", self.run_id, self.trace_id)
            finally:
                self._release_once()

    def _load_context(self) -> None:
        """What the admission did not hand over: price, quota reservation, turn context (blocking)."""
        engine, settings = self.runtime.engine, self.runtime.settings
        if self._billing is None:
            booked_before = self.runtime.booked.total(self.user_name)
            self._billing, _ = read_billing(
                engine, settings, self.user_name, self.agent.model, booked_before=booked_before
            )
            self._price = self._billing.price
        if not self._turn_given:
            self._turn = load_turn_context(engine, self.user_name, self.session_id)

    async def _finalise_once(
        self, status: str, failure: RunFailure | None, first_token_ms: int | None
    ) -> bool:
        # Shielded: cancelling the consumer must not cut the save short; awaited again after it.
        if self._finalising is None:
            self._finalising = asyncio.ensure_future(self._finalise(status, failure, first_token_ms))
        return await asyncio.shield(self._finalising)

    def _whole_answer(self, usage: ev.Usage) -> ev.Usage:
        """Add the paused part of a resumed answer, so ``done`` matches what the answer cost."""
        return whole_answer(usage, self._prior_usage)

    def _priced(self, usage: ev.Usage) -> ev.Usage:
        return priced(usage, self._price, self.kernel.transcript.meter.calls)

    def _over_quota(self) -> bool:
        """Between model calls: has this run used up what the user had left when it started?

        No database read: the run's own usage comes from its meter, the user's other runs
        in this process from ``runtime.booked`` (see :class:`QuotaReservation`).
        """
        if self._billing is None:
            return False
        meter = self.kernel.transcript.meter
        return self._billing.quota.exhausted(
            meter.input_tokens + meter.output_tokens,
            self._settler.booked_tokens,
            self.runtime.booked.total(self.user_name),
        )

    async def _produce(self) -> None:
        transcript = self.kernel.transcript
        meter = transcript.meter
        calls_checked = len(meter.calls)
        try:
            async for event in self.kernel.run(self._graph_stream()):
                self._queue.put_nowait(event)
                if len(meter.calls) > calls_checked:
                    calls_checked = len(meter.calls)
                    self._settle_new_calls()
                    if self._over_quota():
                        # Returning closes the graph stream: no further model call is made.
                        self._queue.put_nowait(QUOTA_REACHED)
                        return
            self._queue.put_nowait(_END)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure becomes an error frame, never a silent end
            failure = classify(exc)  # its sentence in the log too: the operator's hint (a missing /v1 …)
            logger.warning(
                "run %s (trace %s) failed: %r — %s", self.run_id, self.trace_id, exc, failure.message
            )
            self._queue.put_nowait(failure)

    def _configurable(self) -> dict[str, Any]:
        """The graph config's ``configurable`` for this run (thread, user, mode, languages, turn)."""
        return {
            "thread_id": self.session_id,
            "user_name": self.user_name,
            "mode": self.mode,
            **({UI_LANG_KEY: self.lang} if self.lang else {}),
            **({WORDS_LANG_KEY: self.words_lang} if self.words_lang else {}),
            **self._turn.configurable(),
        }

    def _metadata(self) -> dict[str, Any]:
        """The graph config's ``metadata`` (kept on each checkpoint the run writes)."""
        return {"run_id": self.run_id, "trace_id": self.trace_id, "user_name": self.user_name}

    def _graph_stream(self) -> AsyncIterator[Any]:
        config = {
            "configurable": self._configurable(),
            "metadata": self._metadata(),
            "recursion_limit": 200,
            "callbacks": [InternalCallMeter(self.kernel.transcript.meter)],
        }
        return self.agent.graph.astream(
            self._graph_input, config=config, stream_mode=["updates", "messages"], subgraphs=True
        )

    def _settle_new_calls(self) -> None:
        """Settle the calls that ended since the last time, in the background, one batch at a time."""
        self._settler.settle_new(self.kernel.transcript.meter.calls)

    def _partial_if_grown(self) -> dict[str, Any] | None:
        """The answer so far for the partial-answer saver, or None if it did not change."""
        transcript = self.kernel.transcript
        size = (
            transcript.answer_chars
            + transcript.reasoning.chars
            + len(transcript.tool_cards)
            + len(transcript.meter.calls)
        )
        if size == self._saved_size:
            return None
        self._saved_size = size
        return answer_so_far(
            self.session_id, transcript, transcript.answer, self._priced(transcript.meter.usage())
        )

    async def _finalise(self, status: str, failure: RunFailure | None, first_token_ms: int | None) -> bool:
        """Save the answer and run status, settle the rest of the usage; park it all if refused.

        A stopped or failed run first keeps its finished tool results, or the answer it was
        streaming, in the thread (:mod:`~ventapp.agent.stopped_tools`), so the next turn's model
        neither reads them as not run nor gets two user messages in a row.

        Returns:
            True when the answer and status are in the database; False when they were parked
            in the spool file instead (or, if even that failed, logged).
        """
        self.runtime.partials.unwatch(self.run_id)
        if self._producer is not None and not self._producer.done():
            self._producer.cancel()
        if self._producer is not None:
            with contextlib.suppress(BaseException):
                await self._producer
        transcript = self.kernel.transcript
        if status in ("cancelled", "failed"):
            cut = self.kernel.settle_cut_call(self._input_estimate)
            await self._keep_finished_calls(cut, stopped=status == "cancelled")
        usage = self._priced(transcript.meter.usage())
        record = final_record(
            run_id=self.run_id,
            session_id=self.session_id,
            status=status,
            failure=failure,
            transcript=transcript,
            usage=usage,
            first_token_ms=first_token_ms,
        )
        # Billing apart from the message (pitfall 9: this is where the meters meet the ledger): the
        # calls not settled while streaming (the last one, a cut one), after those that were, in
        # the answer's transaction (issue 18: one worker-thread hop and one commit, not two; if it
        # fails, the answer is parked with them).
        await self._settler.wait()
        rest = self._settler.take_new(transcript.meter.calls)
        settled: list[SettleResult] = []

        def book(connection: Any) -> None:
            settled.append(self._settler.book_in(connection, rest))

        try:
            finalised = await asyncio.to_thread(
                turn_writes.finalise_run, self.runtime.engine, **record, along=book if rest else None
            )
        except Exception as exc:
            logger.warning(
                "run %s (trace %s): the database refused its answer (%r); parking it in the spool",
                self.run_id,
                self.trace_id,
                exc,
            )
            return await self._park(record)
        if finalised is not None:
            self._stored_duration_ms = finalised.duration_ms
            self._stored_content = finalised.content or ""
            self._stored_usage = usage if record["answer"] is not None else None
        self._settler.booked(rest, settled[0] if settled else None)
        return True

    async def _keep_finished_calls(self, cut: AIMessageChunk | None, *, stopped: bool) -> None:
        """A cut run's trace into the thread, for the next turn: its finished main-agent tool results,
        or the answer it was streaming (:func:`~ventapp.agent.stopped_tools.record_cut_turn`)."""
        try:
            # The run's metadata: the added checkpoint is the run's (a fork replacing it finds it so).
            config = {"configurable": self._configurable(), "metadata": self._metadata()}
            cards = self.kernel.transcript.tool_cards
            kept = record_cut_turn(self.agent.graph, config, cards, cut, stopped=stopped)
            await asyncio.wait_for(kept, 10)
        except Exception as exc:  # the answer and run status are saved whatever happens here
            logger.warning(
                "run %s (trace %s): finished tool results not kept: %r", self.run_id, self.trace_id, exc
            )

    async def _park(self, record: dict[str, Any]) -> bool:
        """The database is refusing writes: park the answer, status and all usage together."""
        calls = list(self.kernel.transcript.meter.calls)
        self._settler.handed_elsewhere(len(calls))  # the parked record books them (ids keep it exactly-once)
        record = parked_record(
            record, session_id=self.session_id, user_name=self.user_name, model=self.agent.model, calls=calls
        )
        await asyncio.to_thread(park_run, self.runtime.spool, record)
        return False

    def _release_once(self) -> None:
        if not self._released:
            self._released = True
            self._on_release()
            self._on_release = _released  # drop the closure: it holds the session lock and slot
