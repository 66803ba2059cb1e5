"""The UI's bridge to the runs (``ventapp.state.turns``) against a real database and spool."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from ventapp.agent import events as ev
from ventapp.agent.writeback import RUN, park_run
from ventapp.db import turn_writes
from ventapp.db.spool import Spool
from ventapp.state import turns

SESSION = "00000000-0000-0000-0000-0000000000a1"
PAUSE = ev.Interrupt(kind="ask_user", interrupt_token="tok", tool_call_ids=["c1"])


async def test_a_pause_parked_in_the_spool_still_waits(
    engine: sa.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pause whose end the database refused (parked in the spool) read as "nothing waits", so a
    message sent from a tab without the card skipped the drop confirmation."""
    runtime = SimpleNamespace(engine=engine, spool=Spool(tmp_path / "spool.jsonl"))
    reads: list[str] = []

    async def pending_interrupt(rt: object, session_id: str, user_name: str) -> ev.Interrupt:
        reads.append(session_id)  # the graph checkpoint read: only when something may wait
        return PAUSE

    monkeypatch.setattr(turns, "current_runtime", lambda: runtime)
    monkeypatch.setattr(turns, "pending_interrupt", pending_interrupt)
    turn_writes.open_turn(
        engine, session_id=SESSION, run_id="run-1", user_name="u", trace_id="t", kind="chat",
        message="please calculate 2+3", new_session=("u", "calc", None),
    )  # fmt: skip

    assert await turns.load_interrupt(SESSION, "u") is None and reads == [], "a running run: no read"

    runtime.spool.append(RUN, {"run_id": "run-0", "status": "success"})  # a parked end, no pause
    assert await turns.load_interrupt(SESSION, "u") is None and reads == []

    assert park_run(runtime.spool, {"run_id": "run-1", "status": "waiting_input", "answer": None})
    assert await turns.load_interrupt(SESSION, "u") == PAUSE
    assert reads == [SESSION]
