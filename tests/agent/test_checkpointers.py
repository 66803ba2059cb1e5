"""CHECKPOINTER=postgres: the graph state of every process in one PostgreSQL database (real server)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from ventapp.agent.checkpointers import libpq_url, postgres_checkpointer
from ventapp.config import load_settings


async def test_four_processes_set_up_a_fresh_checkpoint_database_at_once_and_share_it(
    postgres_server,
) -> None:  # type: ignore[no-untyped-def]
    url = postgres_server.create_database()
    config = {"configurable": {"thread_id": "t-1", "checkpoint_ns": ""}}
    async with contextlib.AsyncExitStack() as stack:
        # Four pools set up at once stand in for four processes starting together.
        savers = await asyncio.gather(
            *(stack.enter_async_context(postgres_checkpointer(url)) for _ in range(4))
        )
        checkpoint = {"v": 1, "id": "1f000000-0000-6000-8000-000000000001", "ts": "2026-12-01T00:00:00+00:00",
                      "channel_values": {"messages": ["hello"]}, "channel_versions": {"messages": 1},
                      "versions_seen": {}, "pending_sends": []}  # fmt: skip
        await savers[0].aput(config, checkpoint, {"source": "input", "step": 0}, {"messages": 1})

        read = await savers[3].aget_tuple(config)

    assert read is not None and read.checkpoint["channel_values"]["messages"] == ["hello"]


def test_libpq_url_drops_the_sqlalchemy_driver() -> None:
    assert libpq_url("postgresql+psycopg://u:p%40s@h:5/db") == "postgresql://u:p%40s@h:5/db"


def test_postgres_checkpointer_needs_a_postgres_url(tmp_path: Path) -> None:
    base = {"DEEP_AGENT_ENV_PRIORITY": "none", "CHECKPOINTER": "postgres", "DATA_DIR": str(tmp_path)}
    with pytest.raises(ValueError, match="CHECKPOINT_URL"):
        load_settings(base, env_file=tmp_path / "none")
    settings = load_settings({**base, "DATABASE_URL": "postgresql://u@h/db"}, env_file=tmp_path / "none")
    assert settings.checkpoint_url == "postgresql://u@h/db"
