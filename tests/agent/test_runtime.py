"""The process runtime: how the graph-state checkpointer commits (issue 18)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ventapp.agent.runtime import AgentRuntime
from ventapp.config import load_settings

pytestmark = [
    # A coroutine collected unawaited (the start-up measurement cancelled before its thread ran)
    # fails the test instead of showing as a warning at the end of the run.
    pytest.mark.filterwarnings("error:coroutine .* was never awaited:RuntimeWarning"),
    pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning"),
]

SQLITE_SYNCHRONOUS = {"normal": 1, "full": 2}
"""``PRAGMA synchronous`` values SQLite reports for each mode."""


@pytest.mark.parametrize("mode", ["normal", "full"])
async def test_checkpointer_commits_as_checkpoint_sync_says(tmp_path: Path, mode: str) -> None:
    settings = load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path), "CHECKPOINT_SYNC": mode.upper()}
    )
    runtime = await AgentRuntime.open(settings)
    try:
        async with runtime.checkpointer.conn.execute("PRAGMA synchronous") as cursor:
            (value,) = await cursor.fetchone()
        assert value == SQLITE_SYNCHRONOUS[mode]
    finally:
        await runtime.close()


def test_checkpoint_sync_takes_only_known_modes() -> None:
    assert load_settings({"DEEP_AGENT_ENV_PRIORITY": "none"}).checkpoint_sync == "normal"
    with pytest.raises(ValueError, match="CHECKPOINT_SYNC"):
        load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "CHECKPOINT_SYNC": "off"})


async def test_the_first_model_request_forks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's platform header ran `uname -p` (a fork of the server) on the first message."""
    import platform
    import subprocess

    from openai._base_client import get_platform

    monkeypatch.setattr(platform, "_uname_cache", None)
    monkeypatch.setattr(platform, "_platform_cache", {})
    runtime = await AgentRuntime.open(
        load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path)})
    )
    try:
        started: list[object] = []
        real = subprocess.Popen.__init__

        def spy(self: subprocess.Popen, args: object, *rest: object, **kwargs: object) -> None:
            started.append(args)
            real(self, args, *rest, **kwargs)

        monkeypatch.setattr(subprocess.Popen, "__init__", spy)
        assert get_platform() == "Linux"
        assert started == [], "the platform was asked at start-up, not at the first request"
    finally:
        await runtime.close()
