"""Admission, stop and disconnect over real HTTP (spec 002, "执行可靠性与隔离"; issue: reliability)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.api.sse_client import post_chat
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.agent.pipeline import CANCELLED_MARKER

MAX_TOTAL = 3
MAX_PER_USER = 2


@pytest.fixture(scope="module")
def slow_llm() -> Iterator[ScriptedServer]:
    """Streams one word every 20 ms: a "long answer" holds its run for about 4 s."""
    with ScriptedServer(delay_ms=20) as server:
        yield server


@pytest.fixture(scope="module")
def gated_api(slow_llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    env = app_env(tmp_path_factory.mktemp("data"), slow_llm.base_url)
    env.update(MAX_CONCURRENT_RUNS=str(MAX_TOTAL), MAX_RUNS_PER_USER=str(MAX_PER_USER))
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def http(gated_api: ApiServer, slow_llm: ScriptedServer) -> Iterator[httpx.Client]:
    slow_llm.reset()
    with httpx.Client(base_url=gated_api.url, timeout=60) as client:
        yield client


def _burst(url: str, users: list[str]) -> list[httpx.Response]:
    def one(user: str) -> httpx.Response:
        with httpx.Client(base_url=url, timeout=60) as client:
            response, _ = post_chat(client, message="long answer please", user_name=user)
            return response

    with ThreadPoolExecutor(len(users)) as pool:
        return list(pool.map(one, users))


def _wait_idle(client: httpx.Client, session_id: str, user: str = "default") -> dict:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        history = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()
        if history["messages"][-1]["role"] == "assistant":
            return history
        time.sleep(0.1)
    raise AssertionError("the run never finalised")


def _assert_cut_call_billed(http: httpx.Client, run_id: str, session_id: str) -> None:
    """A call cut mid-stream still cost money: it is booked, marked as an estimate.

    The run record and the answer's usage count its input once, as the ledger does.
    """
    deadline = time.monotonic() + 10
    while (
        booked := http.get(f"/api/usage/runs/{run_id}")
    ).status_code == 404 and time.monotonic() < deadline:
        time.sleep(0.1)
    (row,) = booked.json()["items"]
    assert row["source"] == "estimate" and row["output_tokens"] >= 5 and row["input_tokens"] > 300, (
        "input includes the system prompt"
    )
    (run,) = [r for r in http.get(f"/api/sessions/{session_id}/runs").json()["runs"] if r["run_id"] == run_id]
    answer = _wait_idle(http, session_id)["messages"][-1]
    assert run["input_tokens"] == row["input_tokens"] and run["output_tokens"] == row["output_tokens"], (
        run,
        row,
    )
    usage = answer["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["model_calls"]) == (
        row["input_tokens"],
        row["output_tokens"],
        1,
    )


def test_process_gate_under_a_burst(gated_api: ApiServer, slow_llm: ScriptedServer) -> None:
    slow_llm.reset()
    responses = _burst(gated_api.url, [f"user{i}" for i in range(7)])
    codes = sorted(response.status_code for response in responses)
    assert codes == [200] * MAX_TOTAL + [429] * (7 - MAX_TOTAL)
    refused = next(response for response in responses if response.status_code == 429)
    assert refused.json()["code"] == "busy" and refused.json()["retry_after"] > 0
    assert int(refused.headers["retry-after"]) == refused.json()["retry_after"]


def test_user_gate_under_a_burst(gated_api: ApiServer, slow_llm: ScriptedServer) -> None:
    slow_llm.reset()
    codes = sorted(response.status_code for response in _burst(gated_api.url, ["carol"] * 3))
    assert codes == [200] * MAX_PER_USER + [429]


def test_same_request_id_twice_runs_once(http: httpx.Client, slow_llm: ScriptedServer) -> None:
    key = f"req-{uuid.uuid4()}"
    first, frames = post_chat(http, message="hello", request_id=key, user_name="dave")
    assert first.status_code == 200 and frames[-1]["type"] == "done"
    calls = len(slow_llm.requests())
    again, _ = post_chat(http, message="hello", request_id=key, user_name="dave")
    assert again.status_code == 409
    body = again.json()
    assert body["session_id"] == first.headers["x-session-id"] and body["run_id"] == first.headers["x-run-id"]
    assert len(slow_llm.requests()) == calls, "nothing ran again"
    other_user, _ = post_chat(http, message="hello", request_id=key, user_name="erin")
    assert other_user.status_code == 200, "keys are per user"


def test_repeated_request_id_while_the_first_runs_is_409_not_429(
    http: httpx.Client, gated_api: ApiServer
) -> None:
    """Issue 17 item 12: the key is checked before the gate, which the running original fills."""
    key = f"req-{uuid.uuid4()}"
    started: list[threading.Event] = [threading.Event() for _ in range(MAX_PER_USER)]
    heads: list[dict[str, str]] = [{} for _ in range(MAX_PER_USER)]

    def run(index: int, fields: dict[str, tuple[None, str]]) -> None:
        with httpx.Client(base_url=gated_api.url, timeout=60) as client:
            with client.stream("POST", "/api/chat", files=fields) as response:
                heads[index].update(response.headers)
                started[index].set()
                response.read()

    base = {"message": (None, "long answer please"), "user_name": (None, "fran")}
    readers = [
        threading.Thread(target=run, args=(0, {**base, "request_id": (None, key)})),
        threading.Thread(target=run, args=(1, base)),  # fran's second slot: her gate is now full
    ]
    for reader in readers:
        reader.start()
    assert all(event.wait(15) for event in started)
    again, _ = post_chat(http, message="long answer please", request_id=key, user_name="fran")
    assert again.status_code == 409, again.text
    body = again.json()
    assert body["code"] == "duplicate_request"
    assert body["session_id"] == heads[0]["x-session-id"] and body["run_id"] == heads[0]["x-run-id"]
    for session_id in (heads[0]["x-session-id"], heads[1]["x-session-id"]):
        http.post("/api/chat/stop", data={"session_id": session_id, "user_name": "fran"})
    for reader in readers:
        reader.join(15)


@pytest.mark.parametrize("key", ["", "x" * 129])
def test_bad_request_ids_are_400(http: httpx.Client, key: str) -> None:
    response, _ = post_chat(http, message="hello", request_id=key)
    assert response.status_code == 400 and response.json()["code"] == "bad_request"


def test_stop_mid_stream(http: httpx.Client, gated_api: ApiServer, slow_llm: ScriptedServer) -> None:
    frames: list[dict] = []
    headers: dict[str, str] = {}
    got_tokens = threading.Event()

    def consume() -> None:
        with httpx.Client(base_url=gated_api.url, timeout=60) as client:
            with client.stream(
                "POST", "/api/chat", files={"message": (None, "long answer please")}
            ) as response:
                headers.update(response.headers)
                buffer = ""
                for text in response.iter_text():
                    buffer += text
                    while "\n\n" in buffer:
                        block, buffer = buffer.split("\n\n", 1)
                        frames.append(httpx.Response(200, content=block[6:]).json())
                        if sum(frame["type"] == "token" for frame in frames) >= 5:
                            got_tokens.set()

    reader = threading.Thread(target=consume)
    reader.start()
    assert got_tokens.wait(15)
    session_id = headers["x-session-id"]
    assert (
        http.post("/api/chat/stop", data={"session_id": session_id, "user_name": "mallory"}).status_code
        == 404
    )
    assert http.post("/api/chat/stop", data={"session_id": session_id}).json() == {"stopped": True}
    reader.join(15)
    assert frames[-1]["type"] == "error" and frames[-1]["code"] == "cancelled"
    calls = len(slow_llm.requests())
    history = _wait_idle(http, session_id)
    answer = history["messages"][-1]
    assert answer["status"] == "cancelled" and answer["content"].endswith(CANCELLED_MARKER)
    assert len(answer["content"]) > len(CANCELLED_MARKER), "the partial answer is kept"
    _assert_cut_call_billed(http, headers["x-run-id"], session_id)
    time.sleep(0.5)
    assert len(slow_llm.requests()) == calls, "no model call after the stop"
    response, after = post_chat(http, message="hello again", session_id=session_id)
    assert response.status_code == 200 and after[-1]["type"] == "done", "the session and slot are free"


def test_client_disconnect_cancels_the_run(
    http: httpx.Client, gated_api: ApiServer, slow_llm: ScriptedServer
) -> None:
    with httpx.Client(base_url=gated_api.url, timeout=60) as client:
        with client.stream("POST", "/api/chat", files={"message": (None, "long answer please")}) as response:
            session_id = response.headers["x-session-id"]
            tokens = 0
            for line in response.iter_lines():
                tokens += '"type":"token"' in line
                if tokens >= 5:
                    break
    history = _wait_idle(http, session_id)
    answer = history["messages"][-1]
    assert answer["status"] == "cancelled" and answer["content"].endswith(CANCELLED_MARKER)
    _assert_cut_call_billed(http, response.headers["x-run-id"], session_id)
    calls = len(slow_llm.requests())
    time.sleep(0.5)
    assert len(slow_llm.requests()) == calls
    again, frames = post_chat(http, message="still there?", session_id=session_id)
    assert again.status_code == 200 and frames[-1]["type"] == "done"


def test_no_run_to_stop(http: httpx.Client) -> None:
    response, _ = post_chat(http, message="hello")
    stopped = http.post("/api/chat/stop", data={"session_id": response.headers["x-session-id"]})
    assert stopped.status_code == 200 and stopped.json() == {"stopped": False}


def test_unknown_session_stop_is_404(http: httpx.Client, tmp_path: Path) -> None:
    assert http.post("/api/chat/stop", data={"session_id": str(uuid.uuid4())}).status_code == 404
