"""``make api`` mode: the backend alone streams /api/chat over real HTTP and stops cleanly on SIGTERM."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

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


def test_sigkill_mid_run_leaves_interrupted_run_and_usable_session(tmp_path: Path) -> None:
    """Invariant: a run cut off by a crash reads ``interrupted`` after restart; the session chats on."""
    import os
    import signal
    import threading

    from ventapp.db import chat_store
    from ventapp.db.engine import make_engine

    with ScriptedServer(delay_ms=50) as slow:
        env = app_env(tmp_path, slow.base_url)
        app = ReflexApp(env, tmp_path / "api.log", backend_only=True)
        seen: dict[str, str] = {}
        streaming = threading.Event()

        def consume() -> None:
            try:
                with httpx.Client(base_url=app.url, timeout=30) as client:
                    with client.stream(
                        "POST", "/api/chat", files={"message": (None, "long answer please")}
                    ) as response:
                        seen.update(
                            session=response.headers["x-session-id"], run=response.headers["x-run-id"]
                        )
                        for line in response.iter_lines():
                            if '"type":"token"' in line:
                                streaming.set()
            except httpx.HTTPError:
                pass  # the server died under us: expected

        with app:
            reader = threading.Thread(target=consume)
            reader.start()
            assert streaming.wait(30)
            assert app._process is not None
            os.killpg(app._process.pid, signal.SIGKILL)
            app._process.wait(10)
            app._process = None
            reader.join(10)

        engine = make_engine(f"sqlite:///{tmp_path / 'ventagent.db'}")
        run = chat_store.get_run(engine, seen["run"])
        assert run is not None and run.status == "running", "SIGKILL left no chance to finalise"

        with ReflexApp(env, tmp_path / "api2.log", backend_only=True) as again:
            run = chat_store.get_run(engine, seen["run"])
            assert run is not None and run.status == "interrupted"
            with httpx.Client(base_url=again.url, timeout=30) as client:
                response, frames = post_chat(client, message="are you back?", session_id=seen["session"])
                assert response.status_code == 200 and frames[-1]["type"] == "done"
        engine.dispose()


LEGACY = "http://legacy.example:8080"
EVIL = "https://evil.example"


def _socket(app: ReflexApp, origin: str) -> str:
    """Open Reflex's event socket with ``origin``: the first engine.io packet, or ``refused <status>``."""
    url = f"ws://127.0.0.1:{app.port}/_event/?EIO=4&transport=websocket"
    try:
        with connect(url, origin=Origin(origin), open_timeout=10) as socket:
            return str(socket.recv(timeout=10))
    except InvalidStatus as refused:
        return f"refused {refused.response.status_code}"


def test_backend_only_guards_origins_and_redirects_root(llm: ScriptedServer, tmp_path: Path) -> None:
    """Issue 17 items 1 and 14 on the real backend (granian, Reflex's CORS middleware and socket)."""
    env = {**app_env(tmp_path, llm.base_url), "CORS_ORIGINS": LEGACY}
    with ReflexApp(env, tmp_path / "api.log", backend_only=True) as app:
        with httpx.Client(base_url=app.url, timeout=30) as client:
            root = client.get("/")
            assert root.status_code == 307 and root.headers["location"] == "/static/index.html"
            assert "/api/chat" in client.get("/", follow_redirects=True).text

            stranger = client.get("/api/sessions", headers={"origin": EVIL})
            assert stranger.status_code == 200 and "access-control-allow-origin" not in stranger.headers
            preflight = client.options(
                "/api/chat", headers={"origin": EVIL, "access-control-request-method": "POST"}
            )
            assert "access-control-allow-origin" not in preflight.headers
            listed = client.get("/api/sessions", headers={"origin": LEGACY})
            assert listed.headers["access-control-allow-origin"] == LEGACY, "exact origin, never *"

            forged = client.post("/api/chat", files={"message": (None, "hi")}, headers={"origin": EVIL})
            assert forged.status_code == 403 and forged.json()["code"] == "forbidden"
            legacy, frames = post_chat_from(client, LEGACY)
            assert legacy.status_code == 200 and frames[-1]["type"] == "done"
            assert client.request("TRACE", "/api/sessions").status_code == 405
            headers = client.get("/static/index.html").headers
            assert headers["x-content-type-options"] == "nosniff"
            assert "frame-ancestors 'self'" in headers["content-security-policy"]

        assert _socket(app, EVIL) == "refused 403"
        assert _socket(app, "null") == "refused 403"
        assert _socket(app, app.url).startswith("0{"), "the app's own origin opens the socket"
        assert _socket(app, LEGACY).startswith("0{")


def post_chat_from(client: httpx.Client, origin: str) -> tuple[httpx.Response, list[dict]]:
    client.headers["origin"] = origin
    try:
        return post_chat(client, message="hello from the legacy frontend")
    finally:
        del client.headers["origin"]
