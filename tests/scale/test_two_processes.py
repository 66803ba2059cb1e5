"""Two app processes on one PostgreSQL + Redis keep the single process's promises (issue 14).

Real servers (tests/servers.py), real processes (tests/scale/api_process.py), real HTTP; the
model is the scripted server, slowed so that a "long answer" runs for about four seconds.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.sse_client import assert_numbered, collapsed, post_chat, read_frames
from tests.api.test_file_api import FIGURE, PNG_MAGIC
from tests.api.test_stream_api import read_blocks
from tests.domain.network.benchmark_data import DATA_DIR as BENCHMARKS
from tests.scale.processes import AppProcess, scale_env
from tests.scripted_llm.server import ScriptedServer
from tests.servers import RedisServer

LONG = "long answer please"


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    """One word every 20 ms: a long answer holds its run for about four seconds."""
    with ScriptedServer(delay_ms=20) as server:
        yield server


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    """This module's own Redis: one test stops and restarts it."""
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def pair(
    llm: ScriptedServer, redis: RedisServer, postgres_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[AppProcess, AppProcess]]:
    """Processes A and B: own DATA_DIR each; one PostgreSQL database, one Redis and one
    WORKSPACES_DIR (what a shared mount gives several hosts) between them."""
    database_url = postgres_server.create_database()
    workspaces = tmp_path_factory.mktemp("shared-workspaces")
    apps = []
    for name in ("a", "b"):
        folder = tmp_path_factory.mktemp(f"proc-{name}")
        env = scale_env(
            folder / "data",
            llm.base_url,
            database_url,
            redis.url,
            RUN_LEASE_S="3",
            WORKSPACES_DIR=str(workspaces),
        )
        apps.append(AppProcess(env, folder / "app.log"))
    try:
        for app in apps:
            app.spawn()
        for app in apps:
            app.wait()
        yield apps[0], apps[1]
    finally:
        for app in apps:
            app.stop()


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


class _Stream(threading.Thread):
    """POST /api/chat in the background; ``started`` once the first frame arrived."""

    def __init__(self, url: str, **fields: str) -> None:
        super().__init__(daemon=True)
        self.url, self.fields = url, fields
        self.started = threading.Event()
        self.status = 0
        self.headers: dict[str, str] = {}
        self.frames: list[dict[str, Any]] = []
        self.ended_at = 0.0

    def run(self) -> None:
        files = {key: (None, value) for key, value in self.fields.items()}
        try:
            with httpx.Client(base_url=self.url, timeout=60) as client:
                with client.stream("POST", "/api/chat", files=files) as response:
                    self.status, self.headers = response.status_code, dict(response.headers)
                    self.started.set()
                    if response.headers.get("content-type", "").startswith("text/event-stream"):
                        self.frames = read_frames(response)
                    else:
                        response.read()
        except httpx.HTTPError:  # the process was killed mid-stream (one test does that)
            pass
        self.ended_at = time.monotonic()


def test_a_turn_on_a_and_the_next_on_b_share_the_conversation(
    pair: tuple[AppProcess, AppProcess], llm: ScriptedServer
) -> None:
    a, b = pair
    user = _user()
    with httpx.Client(base_url=a.url, timeout=60) as on_a, httpx.Client(base_url=b.url, timeout=60) as on_b:
        first, _ = post_chat(on_a, message="hello there, my fan is 30 kW", user_name=user)
        session_id = first.headers["x-session-id"]
        second, frames = post_chat(on_b, message="and again", session_id=session_id, user_name=user)

        assert second.status_code == 200 and frames[-1]["type"] == "done"
        texts = " ".join(str(m.get("content")) for m in llm.requests()[-1]["messages"])
        assert "my fan is 30 kW" in texts, "B's model call saw A's turn (graph state in PostgreSQL)"
        history = on_a.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()
        assert [m["role"] for m in history["messages"]] == ["user", "assistant", "user", "assistant"]


def test_a_file_uploaded_on_a_is_solved_on_b_and_bs_figure_served_by_a(
    pair: tuple[AppProcess, AppProcess], llm: ScriptedServer
) -> None:
    a, b = pair
    user = _user()
    network = (BENCHMARKS / "A_hongshagang_1" / "topology.csv").read_bytes()
    with httpx.Client(base_url=a.url, timeout=60) as on_a, httpx.Client(base_url=b.url, timeout=60) as on_b:
        form = {"message": "here is my network", "user_name": user}
        with on_a.stream("POST", "/api/chat", data=form, files={"file": ("network.csv", network)}) as first:
            assert first.status_code == 200
            read_frames(first)
            session_id = first.headers["x-session-id"]
        llm.push(
            {"tool_calls": [{"id": "solve-b", "name": "solve_ventilation_network",
                             "arguments": {"path": "/workspace/uploads/network.csv", "total_flow": 151.295}}]},
            {"content": "Solved on B."},
        )  # fmt: skip
        second, frames = post_chat(on_b, message="solve it", session_id=session_id, user_name=user)
        (result,) = [f for f in frames if f["type"] == "tool_result" and f["tool_call_id"] == "solve-b"]
        assert second.status_code == 200 and result["error"] is False, "B read the file A received"

        listing = on_a.get(f"/api/sessions/{session_id}/workspace", params={"user_name": user}).json()
        paths = {f["path"] for f in listing["files"]}
        assert {"/workspace/uploads/network.csv", FIGURE} <= paths, "A lists what B's agent wrote"
        figure = on_a.get(f"/api/sessions/{session_id}/files", params={"user_name": user, "path": FIGURE})
        assert figure.status_code == 200 and figure.content.startswith(PNG_MAGIC)


def test_a_double_submit_across_processes_is_one_200_and_one_409(pair: tuple[AppProcess, AppProcess]) -> None:
    a, b = pair
    user = _user()
    with httpx.Client(base_url=a.url, timeout=60) as on_a:
        session_id = post_chat(on_a, message="hello", user_name=user)[0].headers["x-session-id"]
    streams = [_Stream(app.url, message=LONG, session_id=session_id, user_name=user) for app in (a, b)]
    for stream in streams:
        stream.start()
    for stream in streams:
        stream.join(30)

    assert sorted(stream.status for stream in streams) == [200, 409]


def test_stop_sent_to_the_other_process_stops_the_run(pair: tuple[AppProcess, AppProcess]) -> None:
    a, b = pair
    user = _user()
    stream = _Stream(a.url, message=LONG, user_name=user)
    stream.start()
    assert stream.started.wait(15) and stream.status == 200
    time.sleep(0.5)  # some tokens are out

    stopped = httpx.post(
        f"{b.url}/api/chat/stop",
        data={"session_id": stream.headers["x-session-id"], "user_name": user},
        timeout=10,
    )
    asked = time.monotonic()
    stream.join(15)

    assert stopped.json() == {"stopped": True}
    assert stream.frames[-1]["type"] == "error" and stream.frames[-1]["code"] == "cancelled"
    assert stream.ended_at - asked < 2, "stopped at once, not after the whole answer"


def test_a_stream_joined_on_b_replays_the_run_streaming_on_a_with_no_gap(
    pair: tuple[AppProcess, AppProcess],
) -> None:
    a, b = pair
    user = _user()
    stream = _Stream(a.url, message=LONG, user_name=user)
    stream.start()
    assert stream.started.wait(15) and stream.status == 200
    time.sleep(0.5)  # joined mid-run: the backlog first, then live frames

    with httpx.Client(base_url=b.url, timeout=60) as on_b:
        params = {"session_id": stream.headers["x-session-id"], "user_name": user, "after": "0"}
        with on_b.stream("GET", "/api/chat/stream", params=params) as joined:
            assert joined.status_code == 200
            blocks = read_blocks(joined)
    stream.join(30)

    frames = [frame for _, frame in blocks]
    assert [event_id for event_id, _ in blocks] == [frame["seq"] for frame in frames]
    assert_numbered(frames)
    assert frames[-1]["type"] == "done" and frames[-1]["seq"] == stream.frames[-1]["seq"]
    assert collapsed(frames) == collapsed(stream.frames), "the same frames, texts merged or not"


def test_the_per_user_limit_holds_across_processes(pair: tuple[AppProcess, AppProcess]) -> None:
    a, b = pair
    user = _user()
    streams = [_Stream(a.url, message=LONG, user_name=user) for _ in range(2)]  # MAX_RUNS_PER_USER = 2
    for stream in streams:
        stream.start()
    assert all(stream.started.wait(15) and stream.status == 200 for stream in streams)

    with httpx.Client(base_url=b.url, timeout=60) as on_b:
        third, _ = post_chat(on_b, message="hello", user_name=user)

    assert third.status_code == 429 and third.json()["code"] == "busy"
    for stream in streams:
        httpx.post(
            f"{a.url}/api/chat/stop", data={"session_id": stream.headers["x-session-id"], "user_name": user}
        )
        stream.join(15)


def test_redis_down_new_runs_get_503_then_recover_without_restart(
    pair: tuple[AppProcess, AppProcess], redis: RedisServer
) -> None:
    a, _ = pair
    redis.stop(remove=False)
    try:
        with httpx.Client(base_url=a.url, timeout=30) as on_a:
            started = time.monotonic()
            refused, _ = post_chat(on_a, message="hello", user_name=_user())
            assert refused.status_code == 503 and refused.json()["code"] == "coordination_unavailable"
            assert time.monotonic() - started < 10, "a quick answer, never a hang"
            health = on_a.get("/health")
            assert health.status_code == 503 and health.json()["subsystems"]["redis"]["status"] == "down"
    finally:
        redis.start()
    with httpx.Client(base_url=a.url, timeout=30) as on_a:
        again, frames = post_chat(on_a, message="hello", user_name=_user())
        assert again.status_code == 200 and frames[-1]["type"] == "done"
        assert on_a.get("/health").json()["subsystems"]["redis"]["status"] == "ok"


def test_killing_a_mid_run_leaves_b_alone_and_as_run_reads_interrupted_after_its_lease(
    pair: tuple[AppProcess, AppProcess],
) -> None:  # last in the module: A stays dead
    a, b = pair
    user_a, user_b = _user(), _user()
    on_a = _Stream(a.url, message=LONG, user_name=user_a)
    on_b = _Stream(b.url, message=LONG, user_name=user_b)
    for stream in (on_a, on_b):
        stream.start()
    assert on_a.started.wait(15) and on_b.started.wait(15)
    time.sleep(0.5)  # both are streaming; A's answer so far is saved every second

    assert a.process is not None
    a.process.kill()
    on_b.join(30)

    assert on_b.frames[-1]["type"] == "done", "B's run is untouched by A's death"
    session_id, status = on_a.headers["x-session-id"], ""
    deadline = time.monotonic() + 20  # lease 3 s + B's sweep every 3 s
    with httpx.Client(base_url=b.url, timeout=10) as on_b_http:
        while time.monotonic() < deadline and status != "interrupted":
            history = on_b_http.get(f"/api/chat/history/{session_id}", params={"user_name": user_a}).json()
            status = (
                history["messages"][-1]["status"] if history["messages"][-1]["role"] == "assistant" else ""
            )
            time.sleep(0.3)
    assert status == "interrupted"
