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


async def test_a_renamed_users_checkpoints_name_the_new_owner_in_postgres(
    postgres_server, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """``rename-user`` on the scale-out store: LangGraph copied ``configurable.user_name`` into each
    checkpoint's metadata (JSONB), and only the renamed user's change."""
    from langgraph.checkpoint.base import empty_checkpoint

    from ventapp.agent.checkpointers import rename_checkpoint_owner

    url = postgres_server.create_database()
    settings = load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "CHECKPOINTER": "postgres", "DATA_DIR": str(tmp_path),
         "CHECKPOINT_URL": url},
        env_file=tmp_path / "none",
    )  # fmt: skip
    async with postgres_checkpointer(url) as saver:
        for user, thread in (("ops/admin", "t-1"), ("someone", "t-2")):
            config = {
                "configurable": {"thread_id": thread, "checkpoint_ns": "", "user_name": user, "mode": "plan"}
            }
            await saver.aput(config, empty_checkpoint(), {"source": "input", "step": -1}, {})

    assert await asyncio.to_thread(rename_checkpoint_owner, settings, "ops/admin", "ops-admin") == 1

    async with postgres_checkpointer(url) as saver:
        assert [c async for c in saver.alist(None, filter={"user_name": "ops/admin"})] == []
        [moved] = [c async for c in saver.alist(None, filter={"user_name": "ops-admin"})]
        assert moved.config["configurable"]["thread_id"] == "t-1" and moved.metadata["mode"] == "plan"
        assert len([c async for c in saver.alist(None, filter={"user_name": "someone"})]) == 1


def test_renaming_an_owner_without_a_checkpoint_file_changes_nothing(tmp_path: Path) -> None:
    from ventapp.agent.checkpointers import rename_checkpoint_owner

    base = {"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path)}
    for extra in ({}, {"CHECKPOINTER": "memory"}):
        settings = load_settings({**base, **extra}, env_file=tmp_path / "none")
        assert rename_checkpoint_owner(settings, "a", "b") == 0
    assert not (tmp_path / "checkpoints.db").exists(), "no file is created"
