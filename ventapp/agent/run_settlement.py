"""A run's model calls settled while it streams: one background batch at a time, never twice.

Issue 17: each model call's usage is settled when the call ends (ledger id ``<run_id>:<call>``,
so settling again is harmless), off the hot path in a background task; the batches form a chain
(each waits for the one before), so the ledger sees the calls in order. The tokens settled (or
left pending) are also counted in ``runtime.booked``, which is what the between-calls quota check
reads instead of the database (issue 18, :class:`~ventapp.billing.guard.QuotaReservation`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

import sqlalchemy as sa

from ventapp.agent.runtime import AgentRuntime
from ventapp.billing.settlement import SettleResult, book_within, settle
from ventapp.billing.usage import CallUsage

logger = logging.getLogger(__name__)


class CallSettler:
    """Hands a run's finished model calls to settlement, in order, in the background.

    Args:
        runtime: The process runtime (engine, spool, ``booked`` and the task tracker).
        run_id: The run whose calls these are (the ledger ids' prefix).
        session_id: Its session.
        user_name: Its owner (whose tokens are booked).
        model: The billed model name.
        trace_id: Correlates the log lines.
    """

    def __init__(
        self,
        runtime: AgentRuntime,
        *,
        run_id: str,
        session_id: str,
        user_name: str,
        model: str,
        trace_id: str,
    ) -> None:
        self.runtime = runtime
        self.run_id = run_id
        self.session_id = session_id
        self.user_name = user_name
        self.model = model
        self.trace_id = trace_id
        self.handed = 0
        """How many of the meter's calls (``calls[:handed]``) are handed to settlement already."""
        self.booked_tokens = 0
        """Tokens of those now counted in today's total (ledger or pending)."""
        self._latest: asyncio.Task[None] | None = None  # the latest batch of the chain

    def take_new(self, calls: Sequence[CallUsage]) -> list[CallUsage]:
        """``calls[handed:]``, the calls ended since the last time, now counted as handed over.

        Args:
            calls: Every call of the run so far, in order (the meter's list).
        """
        fresh = list(calls[self.handed :])
        self.handed = len(calls)
        return fresh

    def settle_new(self, calls: Sequence[CallUsage]) -> None:
        """Settle ``calls[handed:]`` (the calls ended since the last time) after the batch before them.

        Args:
            calls: Every call of the run so far, in order (the meter's list).
        """
        fresh = self.take_new(calls)
        if not fresh:
            return
        previous = self._latest

        async def settle_after_previous() -> None:
            if previous is not None:
                with contextlib.suppress(Exception):
                    await previous
            await self._settle(fresh)

        self._latest = self.runtime.track(
            asyncio.create_task(settle_after_previous(), name=f"settle-{self.run_id}")
        )

    def handed_elsewhere(self, count: int) -> None:
        """The first ``count`` calls are booked by other means (a parked record), not by this settler."""
        self.handed = count

    async def wait(self) -> None:
        """Wait until every batch handed over so far is settled (or failed and was logged)."""
        if self._latest is not None:
            await self._latest

    def settle_blocking(self, calls: list[CallUsage]) -> SettleResult | None:
        """Book ``calls`` now, in the calling thread (a worker thread: it blocks on the database).

        Hand the result to :meth:`booked` on the event loop.

        Returns:
            The settlement's result; None when it failed (logged; ``settle`` itself parks or
            keeps pending what the database refuses, so this is an unexpected error).
        """
        try:
            return settle(
                self.runtime.engine,
                run_id=self.run_id,
                session_id=self.session_id,
                user_name=self.user_name,
                model=self.model,
                calls=calls,
                spool=self.runtime.spool,
            )
        except Exception:
            logger.exception("could not settle run %s (trace %s)", self.run_id, self.trace_id)
            return None

    def book_in(self, connection: sa.Connection, calls: list[CallUsage]) -> SettleResult:
        """Book ``calls`` inside a caller's transaction (the run's final save, issue 18).

        Raises:
            sqlalchemy.exc.SQLAlchemyError: The database refused; the caller's transaction rolls back.
        """
        return book_within(
            connection,
            run_id=self.run_id,
            session_id=self.session_id,
            user_name=self.user_name,
            model=self.model,
            calls=calls,
        )

    def booked(self, calls: list[CallUsage], result: SettleResult | None) -> None:
        """Count the tokens of ``calls`` as today's once settled or pending (the quota reads both)."""
        if result is not None and result.status in ("settled", "pending"):
            tokens = sum(call.input_tokens + call.output_tokens for call in calls)
            self.booked_tokens += tokens
            self.runtime.booked.add(self.user_name, tokens)

    async def _settle(self, calls: list[CallUsage]) -> None:
        self.booked(calls, await asyncio.to_thread(self.settle_blocking, calls))
