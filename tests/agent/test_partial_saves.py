"""Streaming runs' answers are saved together: one transaction per pass, only the ones that grew."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from ventapp.agent.partial_saves import PartialSaves
from ventapp.db import chat_store
from ventapp.db.engine import make_engine, upgrade_to_head

SESSION = "00000000-0000-0000-0000-0000000000aa"


@pytest.fixture
def engine(tmp_path: Path) -> sa.Engine:
    url = f"sqlite:///{tmp_path / 'test.db'}"
    upgrade_to_head(url)
    engine = make_engine(url)
    chat_store.create_session(engine, SESSION, "u", "t", "full")
    for run_id in ("r1", "r2", "r3"):
        chat_store.start_run(engine, run_id, SESSION, "u", "trace", "chat")
    return engine


class _Answer:
    """A run's answer as the saver sees it: a snapshot when it changed, else None."""

    def __init__(self, text: str) -> None:
        self.text, self.saved = text, None

    def snapshot(self) -> dict[str, Any] | None:
        if self.text == self.saved:
            return None
        self.saved = self.text
        return {"content": self.text, "tool_calls": []}


async def test_one_pass_saves_every_grown_answer_in_one_transaction(engine: sa.Engine) -> None:
    saves = PartialSaves(engine, interval_s=60)
    answers = {run_id: _Answer(f"text of {run_id}") for run_id in ("r1", "r2", "r3")}
    for run_id, answer in answers.items():
        saves.watch(run_id, answer.snapshot)
    commits: list[int] = []

    def committed(_conn: Any) -> None:
        commits.append(1)

    sa.event.listen(engine, "commit", committed)
    try:
        assert await saves.save_now() == 3
        assert len(commits) == 1, "one commit for all the runs"
        answers["r2"].text += " and more"
        assert await saves.save_now() == 1, "only the answer that grew"
        saves.unwatch("r3")
        answers["r3"].text += " after its final save"
        assert await saves.save_now() == 0
    finally:
        sa.event.remove(engine, "commit", committed)
        await saves.close()
    partials = {r: (chat_store.get_run(engine, r).partial or {}).get("content") for r in answers}  # type: ignore[union-attr]
    assert partials == {"r1": "text of r1", "r2": "text of r2 and more", "r3": "text of r3"}


async def test_passes_run_every_interval_while_runs_are_watched(engine: sa.Engine) -> None:
    saves = PartialSaves(engine, interval_s=0.05)
    answer = _Answer("first words")
    saves.watch("r1", answer.snapshot)
    try:
        for _ in range(100):
            if (chat_store.get_run(engine, "r1").partial or {}).get("content") == "first words":  # type: ignore[union-attr]
                break
            await asyncio.sleep(0.02)
        saved = chat_store.get_run(engine, "r1").partial or {}  # type: ignore[union-attr]
        assert saved.pop("saved_at") and saved == {"content": "first words", "tool_calls": []}
    finally:
        await saves.close()


async def test_interval_zero_saves_nothing(engine: sa.Engine) -> None:
    saves = PartialSaves(engine, interval_s=0)
    saves.watch("r1", _Answer("words").snapshot)
    assert await saves.save_now() == 0
    await saves.close()
