"""The UI's bridge to the runs (``ventapp.state.turns``) against a real database and spool."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from ventapp.agent import events as ev
from ventapp.agent.refusals import rejected
from ventapp.agent.writeback import RUN, park_run
from ventapp.db import turn_writes
from ventapp.db.spool import Spool
from ventapp.i18n import t
from ventapp.state import turns
from ventapp.state.live_answer import failed_answer, to_message
from ventapp.text_rules import without_nul

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


def test_a_refused_message_says_what_was_wrong_with_it_in_the_pages_language() -> None:
    """try20: a too-long message read "这条消息无法按原样发送。" with the reason in English under it."""
    too_long = rejected(400, "bad_request", "refusal.message_too_long", limit="100,000")
    assert turns._refusal_words(too_long, "zh-CN") == "消息超过 100,000 个字符。"
    assert turns._refusal_words(too_long, "en") == "The message is longer than 100,000 characters."
    busy = rejected(429, "busy", "refusal.gate_full_user", retry_after=5, limit=2)
    assert turns._refusal_words(busy, "zh-CN") == busy.message, "a plain sentence stands for busy"
    # try21: the bubble re-worded it by its code ("这条消息无法按原样发送。"), the reason under 详情
    conflict = rejected(400, "bad_request", "refusal.prefix_conflict")
    bubble = to_message(failed_answer(turns._refusal_words(conflict, "zh-CN"), conflict.code, "zh-CN"))
    assert (bubble.error, bubble.error_detail) == (t("refusal.prefix_conflict", "zh-CN"), "")


def test_the_ui_drops_nul_a_person_cannot_see_in_the_box() -> None:
    """try20: told to remove a NUL from the message, the person could not find it (invisible)."""
    assert without_nul("air\x00flow check") == "airflow check"
    assert without_nul("风量") == "风量"
