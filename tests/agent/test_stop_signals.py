"""The stop signal stops the answers streaming in the process (``ventapp.agent.stop_signals``), so
``make api`` stops at once: the real server (``reflex run --env prod --backend-only``, Granian) over
real HTTP, a real answer streaming from the scripted model."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from tests.scripted_llm.server import ScriptedServer
from tests.servers import free_port
from tests.support import app_env
from ventapp.agent.admission_checks import take_slot
from ventapp.agent.pipeline import ChatRejected
from ventapp.config import PROJECT_ROOT

WORDS_DELAY_MS = 300
"""The scripted "long answer" streams 200 words: a minute at this pace."""


def _backend(data_dir: Path, llm_url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        **app_env(data_dir, llm_url),
        "REFLEX_TELEMETRY_ENABLED": "false",
        "REFLEX_CHECK_LATEST_VERSION": "0",
        "REFLEX_USE_NPM": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "reflex", "run", "--env", "prod", "--backend-only", "--backend-port", str(port)],
            cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def _up(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 180  # a loaded 2-core machine imports slowly
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-2000:]
        try:
            httpx.get(f"{url}/health", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"the backend did not start: {log.read_text()[-2000:]}")


def test_sigterm_stops_a_streaming_answer_and_the_server_with_it(tmp_path: Path) -> None:
    """Tester: ``make api`` did not stop within 30 s of SIGTERM. Granian lets every open response
    finish before the app's shutdown runs (and its supervisor waits without a limit): an answer
    streaming to a client held the whole shutdown for as long as it ran."""
    port, frames = free_port(), []
    url, log = f"http://127.0.0.1:{port}", tmp_path / "backend.log"
    with ScriptedServer(delay_ms=WORDS_DELAY_MS) as llm:
        process = _backend(tmp_path / "data", llm.base_url, port, log)
        try:
            _up(process, url, log)

            def stream() -> None:
                with httpx.stream(
                    "POST", f"{url}/api/chat", data={"message": "long answer please"},
                    headers={"Accept-Language": "en"}, timeout=120,
                ) as response:  # fmt: skip
                    frames.extend(
                        json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")
                    )

            reader = threading.Thread(target=stream, daemon=True)
            reader.start()
            deadline = time.monotonic() + 60
            while not any(frame["type"] == "token" for frame in frames) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert any(frame["type"] == "token" for frame in frames), log.read_text()[-2000:]

            process.send_signal(signal.SIGTERM)
            try:  # the answer alone would stream for another minute
                process.wait(30)
            except subprocess.TimeoutExpired:
                pytest.fail("the server was still running 30 s after SIGTERM, held by the streaming answer")
            reader.join(10)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)

    assert process.returncode == 0, log.read_text()[-2000:]
    last = frames[-1]
    assert last["type"] == "error" and last["code"] == "cancelled", last
    assert last["message"].startswith("The server is shutting down"), last
    assert not any(frame["type"] == "done" for frame in frames)
    with sqlite3.connect(tmp_path / "data" / "ventagent.db") as db:
        status, error = db.execute("SELECT status, error FROM execution_runs").fetchone()
        (answer,) = db.execute("SELECT content FROM chat_messages WHERE role = 'assistant'").fetchone()
    assert status == "cancelled" and error.startswith("The server is shutting down")
    assert answer.strip(), "the partial answer was saved"


async def test_no_run_is_admitted_once_the_process_is_stopping() -> None:
    """A request on a connection kept open during the drain would start an answer and hold it again."""
    stopping = SimpleNamespace(stopping=True)
    with pytest.raises(ChatRejected) as refused:
        await take_slot(stopping, "alice")  # type: ignore[arg-type]  # only ``stopping`` is read
    assert (refused.value.status, refused.value.code, refused.value.retry_after) == (503, "shutting_down", 5)
