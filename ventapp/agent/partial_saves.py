"""Saving the answers of streaming runs as they grow: every run at once, one transaction a pass.

While a run streams, its answer so far (text, tool cards, usage) is kept on its
``execution_runs`` row so that a crash loses at most ``ANSWER_SAVE_INTERVAL_S`` of it
(issue 17). Each run used to save itself, one transaction each: with 100 runs streaming
that was 100 commits a second — each an fsync on SQLite — queued in front of new turns'
admissions and every run's settlement (issue 18). Here one pass per interval writes all the
answers that grew, in one transaction, off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Engine

from ventapp.db import turn_writes

logger = logging.getLogger(__name__)

Snapshot = Callable[[], dict[str, Any] | None]
"""Returns a run's answer so far (``{content, tool_calls, citations, usage, ...}``), or None
when it has not changed since the last call. Called on the event loop."""


class PartialSaves:
    """The process's partial-answer saver.

    Args:
        engine: The relational store.
        interval_s: ``ANSWER_SAVE_INTERVAL_S``: seconds between passes; 0 saves nothing.
    """

    def __init__(self, engine: Engine, interval_s: float) -> None:
        self._engine = engine
        self._interval_s = interval_s
        self._watched: dict[str, Snapshot] = {}
        self._loop: asyncio.Task[None] | None = None
        self._failing = False

    def watch(self, run_id: str, snapshot: Snapshot) -> None:
        """Save ``run_id``'s answer every pass (when it grew) until :meth:`unwatch`."""
        if self._interval_s <= 0:
            return
        self._watched[run_id] = snapshot
        if self._loop is None or self._loop.done():
            self._loop = asyncio.create_task(self._passes(), name="partial-saves")

    def unwatch(self, run_id: str) -> None:
        """Stop saving ``run_id`` (its final save follows). A pass already writing may still land:
        the write only touches a run still ``running``, and the final save clears it."""
        self._watched.pop(run_id, None)

    async def save_now(self) -> int:
        """One pass: write every watched answer that changed, in one transaction.

        Returns:
            How many answers were written (0 when none changed or the write failed).
        """
        batch = {}
        for run_id, snapshot in list(self._watched.items()):
            partial = snapshot()
            if partial is not None:
                batch[run_id] = partial
        if not batch:
            return 0
        try:
            await asyncio.to_thread(turn_writes.save_partials, self._engine, batch)
        except Exception as exc:  # the final save (or the spool) still keeps each whole answer
            if not self._failing:
                logger.warning("saving %d partial answer(s) failed: %r", len(batch), exc)
            self._failing = True
            return 0
        self._failing = False
        return len(batch)

    async def _passes(self) -> None:
        while self._watched:
            await asyncio.sleep(self._interval_s)
            await self.save_now()

    async def close(self) -> None:
        """Stop the passes (runs are finalised first; their final saves do not need this)."""
        self._watched.clear()
        if self._loop is not None and not self._loop.done():
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop
