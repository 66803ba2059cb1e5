"""Answers and usage the database refused: parked in the spool file, written back when it returns.

A run's finalisation (:mod:`ventapp.agent.chat_run`) saves the answer and the run status
in one transaction before ``done`` is sent. When that write fails (the SQLite file is
locked, the disk is full, the server is gone) the run is parked here instead: one spool
entry of kind ``run`` holding the answer, the final status and every model call's usage;
the client gets an ``error`` frame with code ``storage``. :func:`write_back` replays the
spool, oldest first, as soon as the database takes writes again — at start-up and every
``WRITEBACK_INTERVAL_S`` — and each replay is idempotent: the run is finalised only while
it still reads ``running`` (:func:`ventapp.db.turn_writes.finalise_run`), ledger rows have
stable ids (``<run_id>:<call>``), so usage lands in the ledger exactly once.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from ventapp.billing.settlement import book_spooled
from ventapp.db import turn_writes
from ventapp.db.spool import Spool, SpoolEntry

logger = logging.getLogger(__name__)


RUN = "run"
SETTLEMENT = "settlement"


@dataclass(frozen=True)
class WritebackReport:
    """Outcome of one :func:`write_back` pass: entries written, and entries still parked."""

    written: int = 0
    remaining: int = 0


def park_run(spool: Spool, record: dict[str, Any]) -> bool:
    """Park a run's finalisation (see :func:`_write_run` for the shape). Blocking (fsync).

    Returns:
        True when the record is on disk; False when even the spool file refused it (logged
        at ERROR with the figures, the last resort).
    """
    try:
        spool.append(RUN, record)
    except Exception:
        logger.exception(
            "ANSWER LOST: run %s could be saved neither in the database nor in %s; status=%s usage=%s",
            record.get("run_id"),
            spool.path,
            record.get("status"),
            (record.get("settlement") or {}).get("calls"),
        )
        return False
    return True


def _write_run(engine: Engine, record: dict[str, Any]) -> None:
    """Finalise a parked run, then book its usage. Raises if the database still refuses."""
    finished_at = datetime.fromisoformat(record["finished_at"]) if record.get("finished_at") else None
    turn_writes.finalise_run(
        engine,
        record["run_id"],
        record["status"],
        answer=record.get("answer"),
        error=record.get("error"),
        error_code=record.get("error_code"),
        input_tokens=int(record.get("input_tokens") or 0),
        output_tokens=int(record.get("output_tokens") or 0),
        first_token_ms=record.get("first_token_ms"),
        finished_at=finished_at,
    )
    if record.get("settlement"):
        book_spooled(engine, record["settlement"])


def _write(engine: Engine, entry: SpoolEntry) -> None:
    if entry.kind == RUN:
        _write_run(engine, entry.payload)
    elif entry.kind == SETTLEMENT:
        book_spooled(engine, entry.payload)
    else:
        logger.error("unknown spool entry kind %r (id %s) left in place", entry.kind, entry.id)
        raise ValueError(entry.kind)


def write_back(engine: Engine, spool: Spool) -> WritebackReport:
    """Write parked entries back to the database, oldest first. Blocking: run in a thread.

    Stops at the first entry the database refuses (it is probably still down) and leaves
    it and the rest for the next pass. Never raises.
    """
    written = 0
    entries = spool.pending()
    for entry in entries:
        try:
            _write(engine, entry)
            spool.mark_done(entry.id)
        except Exception as exc:
            logger.warning("writing back spool entry %s (%s) failed: %r", entry.id, entry.kind, exc)
            break
        written += 1
    if written:
        logger.info("wrote %d parked answer(s)/settlement(s) back to the database", written)
    return WritebackReport(written=written, remaining=len(entries) - written)


def parked_run_ids(spool: Spool) -> set[str]:
    """Runs whose finalisation still waits in the spool (start-up must not mark them interrupted)."""
    return {str(entry.payload.get("run_id")) for entry in spool.pending() if entry.kind == RUN}


def parked_pauses(spool: Spool) -> frozenset[str]:
    """Runs that paused for a person but whose ``waiting_input`` end is still parked in the spool.

    Cheap on the send path: the spool keeps its count in memory, so the file is read only while
    it holds entries (the database refused writes lately).
    """
    if not spool.count():
        return frozenset()
    return frozenset(
        str(entry.payload.get("run_id"))
        for entry in spool.pending()
        if entry.kind == RUN and entry.payload.get("status") == "waiting_input"
    )


async def writeback_loop(engine: Engine, spool: Spool, interval_s: float) -> None:
    """Every ``interval_s`` seconds, write back whatever the spool holds, until cancelled."""
    while True:
        await asyncio.sleep(interval_s)
        if spool.count():
            await asyncio.to_thread(write_back, engine, spool)
