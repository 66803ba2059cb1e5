"""``make api`` mode: the backend alone streams /api/chat over real HTTP and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

from tests.api.sse_client import post_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.script import long_answer
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
        # Issue 18: the server's start-up heap is out of the collector's full passes (obs.heap);
        # a started server holds far more than 100,000 long-lived objects.
        frozen = re.search(r"start-up heap frozen: (\d+) objects", (tmp_path / "api.log").read_text())
        assert frozen is not None and int(frozen.group(1)) > 100_000
        # The lifespan must close the SQLite checkpointer, or aiosqlite's thread hangs shutdown.
        started = time.monotonic()
        code = app.stop(timeout_s=20)
        assert code is not None, (
            f"backend did not exit on SIGTERM:\n{(tmp_path / 'api.log').read_text()[-2000:]}"
        )
        assert time.monotonic() - started < 20


def test_sigkill_mid_run_leaves_interrupted_run_and_usable_session(tmp_path: Path) -> None:
    """Invariant: a run cut off by a crash reads ``interrupted`` after restart; the session chats on.

    Issue 17 item 4: after two model calls (the tool-call step complete) and ~20 streamed
    tokens of the second, ``kill -9`` loses neither the finished call's usage (settled when
    it ended) nor the answer so far (saved every ANSWER_SAVE_INTERVAL_S).
    """
    import os
    import signal
    import threading

    from ventapp.db import billing_store, chat_store
    from ventapp.db.engine import make_engine

    answer = long_answer(200)
    with ScriptedServer(delay_ms=50) as slow:
        slow.push(
            {"tool_calls": [{"name": "calculate", "arguments": {"expression": "(12+8)*3"}}]},
            {"content": answer},
        )
        env = {**app_env(tmp_path, slow.base_url), "ANSWER_SAVE_INTERVAL_S": "0.5"}
        app = ReflexApp(env, tmp_path / "api.log", backend_only=True)
        seen: dict[str, str] = {}
        streamed: list[str] = []
        streaming = threading.Event()

        def consume() -> None:
            try:
                with httpx.Client(base_url=app.url, timeout=30) as client:
                    with client.stream(
                        "POST", "/api/chat", files={"message": (None, "please calculate (12+8)*3")}
                    ) as response:
                        seen.update(
                            session=response.headers["x-session-id"], run=response.headers["x-run-id"]
                        )
                        for line in response.iter_lines():
                            if '"type":"token"' in line:
                                streamed.append(json.loads(line[len("data: ") :])["content"])
                                if len(streamed) >= 20:
                                    streaming.set()
            except httpx.HTTPError:
                pass  # the server died under us: expected

        with app:
            reader = threading.Thread(target=consume)
            reader.start()
            assert streaming.wait(60)
            assert app._process is not None
            os.killpg(app._process.pid, signal.SIGKILL)
            app._process.wait(10)
            app._process = None
            reader.join(10)

        engine = make_engine(f"sqlite:///{tmp_path / 'ventagent.db'}")
        run = chat_store.get_run(engine, seen["run"])
        assert run is not None and run.status == "running", "SIGKILL left no chance to finalise"
        (booked,) = billing_store.ledger_for_run(engine, seen["run"])  # the finished call only
        assert booked.input_tokens > 0 and booked.output_tokens > 0
        saved = (run.partial or {}).get("content", "")
        assert saved and answer.startswith(saved), "the answer so far was not saved while it grew"
        # At most ANSWER_SAVE_INTERVAL_S (10 tokens at 50 ms) behind what the client had seen.
        assert len(saved.split()) >= 5

        with ReflexApp(env, tmp_path / "api2.log", backend_only=True) as again:
            run = chat_store.get_run(engine, seen["run"])
            assert run is not None and run.status == "interrupted"
            assert (run.input_tokens, run.output_tokens) == (booked.input_tokens, booked.output_tokens)
            with httpx.Client(base_url=again.url, timeout=30) as client:
                history = client.get(f"/api/chat/history/{seen['session']}").json()
                (kept,) = [m for m in history["messages"] if m["role"] == "assistant"]
                assert kept["status"] == "interrupted" and kept["content"] == saved
                assert [(c["tool"], c["content"]) for c in kept["tool_calls"]] == [("calculate", "60")]
                assert kept["usage"]["input_tokens"] == booked.input_tokens
                assert kept["usage"]["model_calls"] == 1
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
            # One CORS layer: Reflex wrapped our API in a second one, which answered "Origin, Origin".
            assert listed.headers.get_list("vary") == ["Origin"], listed.headers.get_list("vary")
            assert client.get("/health", headers={"origin": LEGACY}).headers.get_list("vary") == ["Origin"]

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
