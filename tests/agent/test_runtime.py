"""The process runtime: how the graph-state checkpointer commits (issue 18)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ventapp.agent.runtime import AgentRuntime, get_runtime, runtime_lifespan
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


async def test_the_lifespans_end_waits_for_a_tab_showing_a_runs_end_with_the_runtime_still_open(
    tmp_path: Path,
) -> None:
    """Tester: at SIGTERM the tab never showed the shutdown sentence. Granian ends the lifespan as soon
    as no HTTP response is open (a tab's socket is none): the runtime was withdrawn while the tab's
    sink still had to read the sidebar and commit the stopped answer, and the process ended under it."""
    settings = load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path)})
    seen: list[object] = []
    shown = asyncio.Event()

    async def tab() -> None:
        with get_runtime().delivering():
            await asyncio.sleep(0.3)  # the stopped answer's end reaching the tab
            seen.append(get_runtime())  # the sidebar is read through the runtime
        shown.set()

    async with runtime_lifespan(settings) as runtime:
        delivery = asyncio.create_task(tab())
        await asyncio.sleep(0)
    assert shown.is_set(), "the lifespan ended before the tab had shown the answer's end"
    assert seen == [runtime]
    await delivery


async def test_the_start_up_line_names_the_endpoint_without_its_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """try14: ``agent runtime ready … endpoint=http://bob:<password>@host/v1`` went to the log."""
    from ventapp.agent import runtime as runtime_module

    lines: list[str] = []
    monkeypatch.setattr(runtime_module.logger, "info", lambda message, *args: lines.append(message % args))
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "DATA_DIR": str(tmp_path),
            "OPENAI_BASE_URL": "http://bob:Sekr1tpw@127.0.0.1:9/v1?key=abc",
        }
    )
    async with runtime_lifespan(settings):
        pass
    ready = [line for line in lines if "runtime ready" in line]
    assert ready and "endpoint=http://127.0.0.1:9/v1 " in ready[0], lines
    assert not any("Sekr1tpw" in line or "key=abc" in line for line in lines), lines
