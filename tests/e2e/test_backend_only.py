"""``make api`` mode: the backend alone streams /api/chat over real HTTP and stops cleanly on SIGTERM."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.api.sse_client import post_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env


def test_backend_only_streams_and_shuts_down(llm: ScriptedServer, tmp_path: Path) -> None:
    app = ReflexApp(app_env(tmp_path, llm.base_url), tmp_path / "api.log", backend_only=True)
    with app:
        with httpx.Client(base_url=app.url, timeout=30) as client:
            response, frames = post_chat(client, message="please calculate (12+8)*3")
            assert response.status_code == 200 and response.headers["x-session-id"]
            assert [frame["type"] for frame in frames][-1] == "done"
            assert any(frame["type"] == "tool_result" and frame["content"] == "60" for frame in frames)
            assert client.get("/health").json()["database"] == "ok"
        # The lifespan must close the SQLite checkpointer, or aiosqlite's thread hangs shutdown.
        started = time.monotonic()
        code = app.stop(timeout_s=20)
        assert code is not None, (
            f"backend did not exit on SIGTERM:\n{(tmp_path / 'api.log').read_text()[-2000:]}"
        )
        assert time.monotonic() - started < 20
