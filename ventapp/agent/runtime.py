"""The process-wide agent runtime: database engine, checkpointer and the compiled agent.

Opened once by the app's lifespan task and closed there (DESIGN.md: the SQLite
checkpointer binds the running loop at construction and, left open, keeps a
non-daemon thread that hangs shutdown). Both sinks (API and UI) reach it through
:func:`get_runtime`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import platform
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import Any

from sqlalchemy.engine import Engine

from ventapp.agent import content_block_types, untraced_hooks
from ventapp.agent.admission import ProcessGuard, RunGate
from ventapp.agent.agent_set import AgentSet
from ventapp.agent.checkpointers import open_checkpointer
from ventapp.agent.coordination import Coordination, LocalCoordination, RedisCoordination
from ventapp.agent.endpoint_probe import EndpointProbe, public_url
from ventapp.agent.errors import SERVER_STOPPING
from ventapp.agent.partial_saves import PartialSaves
from ventapp.agent.prompt_budget import PromptBudget, check_fixed_prompt
from ventapp.agent.redis_run_log import RedisRunLog
from ventapp.agent.run_log import MemoryRunLog, RunLog
from ventapp.agent.stop_signals import on_stop_signals
from ventapp.agent.writeback import parked_run_ids, write_back, writeback_loop
from ventapp.billing.guard import BookedTokens
from ventapp.billing.pricing import seed_prices, unpriced_models
from ventapp.billing.settlement import pending_retry_loop
from ventapp.config import Settings, get_settings, warn_conflicts
from ventapp.db import run_recovery
from ventapp.db.engine import check_reachable, make_engine, upgrade_to_head
from ventapp.db.spool import Spool
from ventapp.obs.logs import setup_logging

logger = logging.getLogger(__name__)
SETTLE_POLL_S = 0.05
"""How often :meth:`AgentRuntime.settle` looks whether the stopped runs and their tabs are done."""


class AgentRuntime:
    """Resources shared by every run. Create with :meth:`open`, release with :meth:`close`."""

    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        checkpointer: Any,
        exit_stack: contextlib.AsyncExitStack,
        spool: Spool | None = None,
    ):
        self.settings = settings
        self.engine = engine
        self.checkpointer = checkpointer
        self._exit_stack = exit_stack
        self.agents = AgentSet(settings, checkpointer)
        """The compiled agents, one per model route (``MODELS``); rebuilt by thinking switches and reloads."""
        self.endpoint_probe = EndpointProbe()
        """Reachability of the model endpoints, cached briefly (``/health``)."""
        # Weak: a session's lock lives while a run holds it or a caller waits on it, then goes,
        # so the dict does not grow by one lock per session ever chatted in (issue 17, item 13).
        self._session_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self.gate = RunGate(settings.max_concurrent_runs, settings.max_runs_per_user)
        self.partials = PartialSaves(engine, settings.answer_save_interval_s)
        """Saves streaming runs' answers as they grow, all runs in one transaction a pass."""
        self.booked = BookedTokens()
        """Tokens booked per user by this process: what a run's quota reservation adds of other runs."""
        self.coordination: Coordination = (
            RedisCoordination(
                settings.redis_url,
                settings.max_concurrent_runs,
                settings.max_runs_per_user,
                settings.run_lease_s,
            )
            if settings.redis_url
            else LocalCoordination(self.gate)
        )
        """The gate, session claims and Stop as every process sees them (Redis with ``REDIS_URL``)."""
        self._lease_sweep: asyncio.Task[None] | None = None
        self.active_runs: dict[str, Any] = {}
        """session_id -> the ChatRun streaming in it (for stop)."""
        self.stopping = False
        """The process was told to stop (SIGTERM, Ctrl-C; :meth:`begin_shutdown`): no new run is admitted."""
        self.run_log: RunLog = (
            RedisRunLog(settings.redis_url, settings.run_log_ttl_s, settings.run_log_max_frames)
            if settings.redis_url
            else MemoryRunLog(settings.run_log_ttl_s, settings.run_log_max_frames)
        )
        """Every run's numbered frames, which clients follow and join (``live_runs``)."""
        self.process_guard = ProcessGuard(settings.data_dir)
        self.spool = spool or Spool(settings.spool_path)
        """Answers and usage the database refused, waiting to be written back (``writeback``)."""
        self._billing_retry: asyncio.Task[None] | None = None
        self.prompt_budget: PromptBudget | None = None
        """The fixed prompt measured against CONTEXT_LIMIT; None until measured (just after start)."""
        self._prompt_check: asyncio.Task[None] | None = None
        self._writeback: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._deliveries: set[object] = set()
        """Tabs showing the end of a run right now (:meth:`delivering`)."""

    @classmethod
    async def open(cls, settings: Settings) -> AgentRuntime:
        """Migrate the database, mark crashed runs, open the checkpointer.

        Raises:
            SettingError: A database server named by ``DATABASE_URL``/``CHECKPOINT_URL`` cannot
                be reached (one line naming the key).
            sqlalchemy.exc.OperationalError: The database cannot be migrated.
        """
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(check_reachable, settings.database_url)
        if settings.checkpointer == "postgres" and settings.checkpoint_url != settings.database_url:
            await asyncio.to_thread(check_reachable, settings.checkpoint_url, "CHECKPOINT_URL")
        await asyncio.to_thread(upgrade_to_head, settings.database_url)
        engine = make_engine(settings.database_url, busy_timeout_s=settings.db_busy_timeout_s)
        # Parked answers first: a run whose end is in the spool ended; it was not cut off.
        spool = Spool(settings.spool_path)
        await asyncio.to_thread(write_back, engine, spool)
        if not settings.redis_url:
            stale = await asyncio.to_thread(
                run_recovery.mark_running_interrupted, engine, keep=parked_run_ids(spool)
            )
            if stale:
                logger.warning("marked %d run(s) left running by a previous process as interrupted", stale)
        stack = contextlib.AsyncExitStack()
        try:
            checkpointer = await open_checkpointer(settings, stack)
        except Exception:
            await stack.aclose()
            engine.dispose()
            raise
        try:
            runtime = cls(settings, engine, checkpointer, stack, spool)
            # Build now: a bad HITL_TOOLS, skill or MCP tool clash fails the start, not every chat
            # (in a worker thread: listing the MCP servers may take up to their timeouts).
            await runtime.agents.ready()
        except Exception:
            await stack.aclose()
            engine.dispose()
            raise
        if runtime.coordination.shared:
            # Other processes may be running: a run is interrupted only when its lease has lapsed.
            await runtime.coordination.start(runtime._stop_local)
            runtime._lease_sweep = asyncio.create_task(runtime._sweep_lapsed(), name="lease-sweep")
        else:
            runtime.process_guard.acquire()
        await asyncio.to_thread(seed_prices, engine)
        await _warn_unpriced(engine, settings)
        # The model SDK names the platform in its first request's headers, and Python finds the
        # processor by running `uname -p`: a fork of the whole server on the first user's first
        # message. Asked here once (the answer is cached), it costs the start instead.
        await asyncio.to_thread(platform.platform)
        untraced_hooks.install()  # middleware hooks stay on the loop unless LangSmith traces
        content_block_types.install()  # a constant, derived from type hints per block per call
        # Settlements that could not be written are retried now and every minute (spec "持久化结算").
        runtime._billing_retry = asyncio.create_task(pending_retry_loop(engine), name="billing-pending-retry")
        # In the background: it assembles a second agent (~0.5 s of CPU) that no request waits for.
        runtime._prompt_check = asyncio.create_task(runtime._check_prompt(), name="prompt-budget")
        runtime._writeback = asyncio.create_task(
            writeback_loop(engine, runtime.spool, settings.writeback_interval_s), name="spool-writeback"
        )
        return runtime

    def _stop_local(self, session_id: str) -> None:
        run = self.active_runs.get(session_id)
        if run is not None:
            run.request_stop()

    async def sweep_lapsed(self) -> int:
        """Mark ``interrupted`` every ``running`` run whose session no process claims any more.

        With ``REDIS_URL`` only: a crashed process's claims lapse after ``RUN_LEASE_S``; live
        runs (here or in another process) keep their claim fresh and are never touched.

        Returns:
            How many runs were marked.
        """
        running = await asyncio.to_thread(run_recovery.running_runs, self.engine)
        if not running:
            return 0
        claimed = await self.coordination.claimed_sessions(sorted(set(running.values())))
        keep = {run_id for run_id, session_id in running.items() if session_id in claimed}
        keep |= parked_run_ids(self.spool) | {run.run_id for run in self.active_runs.values()}
        if keep >= set(running):
            return 0
        marked = await asyncio.to_thread(run_recovery.mark_running_interrupted, self.engine, keep=keep)
        if marked:
            logger.warning(
                "marked %d run(s) whose lease lapsed (their process is gone) as interrupted", marked
            )
        return marked

    async def _sweep_lapsed(self) -> None:
        while True:
            try:
                await self.sweep_lapsed()
            except Exception as failed:  # Redis or the database away: try again next period
                logger.warning("lease sweep failed: %s", failed)
            await asyncio.sleep(self.settings.run_lease_s)

    async def _check_prompt(self) -> None:
        # The agent set's HITL_TOOLS: a down MCP server's tool named there is not there to measure.
        settings = dataclasses.replace(self.settings, hitl_tools=self.agents.hitl_tools())
        self.prompt_budget = await check_fixed_prompt(settings)

    def begin_shutdown(self) -> int:
        """The process was told to stop: stop every run streaming here and admit no new one.

        Called at the stop signal (:mod:`ventapp.agent.stop_signals`), before the server runs the
        lifespan's end: Granian lets every open response finish first, and an answer streaming
        to a client would otherwise hold the whole shutdown for as long as it runs. Each run ends
        as a stop does (partial answer saved, usage settled, an ``error`` frame with code
        ``cancelled``). Idempotent.

        Returns:
            How many runs were asked to stop.
        """
        self.stopping = True
        stopped = sum(bool(run.request_stop(SERVER_STOPPING)) for run in list(self.active_runs.values()))
        if stopped:
            logger.warning(
                "shutting down: stopped %d running answer(s); their partial answers are kept", stopped
            )
        return stopped

    @contextlib.contextmanager
    def delivering(self) -> Iterator[None]:
        """While entered, a tab is showing a run's end: :meth:`settle` waits for it.

        The UI sink enters it while it follows a run to the end and commits the answer, so that at
        shutdown the stopped answer (its ``error`` sentence) is committed to the tab's state while the
        runtime it reads the sidebar and the session's mark with is still there.
        """
        token = object()
        self._deliveries.add(token)
        try:
            yield
        finally:
            self._deliveries.discard(token)

    async def settle(self, timeout_s: float = 5.0) -> None:
        """Stop every run here and wait until they are finalised and shown (at most ``timeout_s``).

        Runs finalise their partial answer and status; tabs following them show the end
        (:meth:`delivering`). Called by the lifespan's end before the runtime is withdrawn, and by
        :meth:`close`.
        """
        for run in list(self.active_runs.values()):
            run.request_stop()
        for _ in range(math.ceil(timeout_s / SETTLE_POLL_S)):
            if not (self.active_runs or self._deliveries):
                break
            await asyncio.sleep(SETTLE_POLL_S)

    async def close(self) -> None:
        """Close the checkpointer connection and dispose of the engine."""
        # Let stopped runs finalise (partial answer, status) before the checkpointer closes.
        await self.settle()
        await self.partials.close()
        # Settlements and answer saves still in flight finish before the engine goes.
        if self._background:
            await asyncio.wait(set(self._background), timeout=2 * self.settings.db_busy_timeout_s + 1)
        for task in (self._billing_retry, self._writeback, self._prompt_check, self._lease_sweep):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.coordination.close()
        if isinstance(self.run_log, RedisRunLog):
            await self.run_log.aclose()
        await self.agents.mcp.aclose()  # long-lived MCP sessions: their stdio processes end
        await self._exit_stack.aclose()
        self.engine.dispose()
        self.process_guard.release()

    @property
    def agent(self) -> Any:
        """The main route's current compiled agent, built on first use (any agent reads any
        session's graph state: they share the checkpointer)."""
        return self.agents.get().graph

    def session_lock(self, session_id: str) -> asyncio.Lock:
        """The lock that keeps one run per session at a time (hold the returned object while used)."""
        lock = self._session_locks.get(session_id)
        if lock is None:
            lock = self._session_locks[session_id] = asyncio.Lock()
        return lock

    def track(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        """Keep a fire-and-forget task (a settlement, an answer save) alive until it ends.

        :meth:`close` waits for the ones still running before the engine is disposed.
        """
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task


_current: AgentRuntime | None = None


def set_runtime(runtime: AgentRuntime | None) -> None:
    """Install (or clear) the process-wide runtime; called by the lifespan task."""
    global _current
    _current = runtime


def get_runtime() -> AgentRuntime:
    """The process-wide runtime.

    Raises:
        RuntimeError: The app's lifespan has not opened it (yet).
    """
    if _current is None:
        raise RuntimeError("The agent runtime is not started; it opens in the app's lifespan task.")
    return _current


async def _warn_unpriced(engine: Engine, settings: Settings) -> None:
    """Log a WARNING per configured route whose model has no price: every chat on it will be refused."""
    if settings.billing_allow_unpriced:
        return
    models = [route.model for route in settings.routes if route.configured]
    for model in await asyncio.to_thread(unpriced_models, engine, models):
        logger.warning(
            "model %r has no price: every chat on it is refused (503 model_unpriced). Add its price "
            "(python -m ventapp.billing set-price %s INPUT OUTPUT CNY) or set BILLING_ALLOW_UNPRICED=1",
            model,
            model,
        )


@contextlib.asynccontextmanager
async def runtime_lifespan(settings: Settings | None = None) -> AsyncIterator[AgentRuntime]:
    """Open the runtime for the app's lifetime and always close it (Reflex lifespan task).

    Args:
        settings: Defaults to ``config.get_settings()``.
    """
    settings = settings or get_settings()
    setup_logging(settings.log_level)
    warn_conflicts(settings)
    runtime = await AgentRuntime.open(settings)
    set_runtime(runtime)
    logger.info(
        "agent runtime ready: model=%s endpoint=%s configured=%s checkpointer=%s",
        settings.model_name,
        public_url(settings.openai_base_url) if settings.openai_base_url else "(OpenAI default)",
        settings.model_configured,
        settings.checkpointer,
    )
    try:
        with on_stop_signals(runtime.begin_shutdown):
            yield runtime
    finally:
        # Granian ends the lifespan as soon as no HTTP response is open (a tab's socket is none): the
        # tabs' sinks commit their stopped answers before the runtime they read with goes.
        await runtime.settle()
        set_runtime(None)
        await runtime.close()
