"""Joining a run over HTTP (issue 11): ``seq`` on every frame, ``GET /api/chat/stream``, ``detach=1``.

Real HTTP against the API and the scripted model streaming one word every 10 ms, so a
200-token answer takes about two seconds: long enough to cut a client mid-answer.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.api.sse_client import assert_numbered, collapsed, is_comment, post_chat
from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env

TTL_S = 3


@pytest.fixture(scope="module")
def paced_llm() -> Iterator[ScriptedServer]:
    with ScriptedServer(delay_ms=10) as server:
        yield server


@pytest.fixture(scope="module")
def api_url(paced_llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {
        **app_env(tmp_path_factory.mktemp("data"), paced_llm.base_url),
        "RUN_LOG_TTL_S": str(TTL_S),
        "MAX_CONCURRENT_RUNS": "20",
    }
    with patched_env(env), ApiServer() as server:
        yield server.url


@pytest.fixture
def http(api_url: str, paced_llm: ScriptedServer) -> Iterator[httpx.Client]:
    paced_llm.reset()
    with httpx.Client(base_url=api_url, timeout=60) as client:
        yield client


def read_blocks(
    response: httpx.Response, stop_after: int | None = None
) -> list[tuple[int | None, dict[str, Any]]]:
    """``(id, frame)`` per SSE block (id None without an ``id:`` line); stops early after ``stop_after`` frames."""
    out: list[tuple[int | None, dict[str, Any]]] = []
    buffer = ""
    for text in response.iter_text():
        buffer += text
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            if is_comment(block):
                continue
            event_id, data = None, None
            for line in block.split("\n"):
                if line.startswith("id: "):
                    event_id = int(line[4:])
                else:
                    assert line.startswith("data: "), block
                    data = json.loads(line[6:])
            assert data is not None, block
            out.append((event_id, data))
            if stop_after is not None and len(out) >= stop_after:
                return out
    return out


def start_cut(
    client: httpx.Client, user: str, frames: int, detach: bool
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """POST a 200-token chat and hang up after ``frames`` frames: (headers, frames read)."""
    fields = {"message": (None, "long answer please"), "user_name": (None, user)}
    if detach:
        fields["detach"] = (None, "1")
    with client.stream("POST", "/api/chat", files=fields) as response:
        assert response.status_code == 200
        got = [frame for _, frame in read_blocks(response, stop_after=frames)]
        return dict(response.headers), got


def join(
    client: httpx.Client, session_id: str, user: str, **kw: Any
) -> tuple[httpx.Response, list[tuple[int | None, dict[str, Any]]]]:
    headers = {"Last-Event-ID": str(kw.pop("last_event_id"))} if "last_event_id" in kw else {}
    params = {"session_id": session_id, "user_name": user, **kw}
    with client.stream("GET", "/api/chat/stream", params=params, headers=headers) as response:
        if response.status_code != 200:
            response.read()
            return response, []
        return response, read_blocks(response)


def wait_answer(client: httpx.Client, session_id: str, user: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        messages = client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()[
            "messages"
        ]
        if messages[-1]["role"] == "assistant":
            return messages[-1]
        time.sleep(0.1)
    raise AssertionError("no answer saved")


def tokens(frames: list[dict[str, Any]]) -> str:
    return "".join(frame["content"] for frame in frames if frame["type"] == "token")


def test_chat_frames_are_numbered_and_keep_the_legacy_format(http: httpx.Client) -> None:
    response, frames = post_chat(http, message="hello", user_name="seq")  # the reader refuses any id: line
    assert response.status_code == 200
    assert_numbered(frames)
    assert frames[-1]["type"] == "done"


@pytest.mark.parametrize("ended", [False, True], ids=["while-running", "after-the-end"])
def test_a_client_cut_at_frame_n_rejoins_and_gets_the_rest_exactly_once(
    http: httpx.Client, ended: bool
) -> None:
    user = f"cut-{ended}"
    headers, first = start_cut(http, user, frames=40, detach=True)
    session_id, n = headers["x-session-id"], first[-1]["seq"]
    assert n == 40
    if ended:
        wait_answer(http, session_id, user)

    response, rest = join(http, session_id, user, last_event_id=n)

    assert response.status_code == 200 and response.headers["x-run-id"] == headers["x-run-id"]
    assert_numbered([frame for _, frame in rest], first=n + 1)
    assert all(frame["seq"] == event_id for event_id, frame in rest)
    assert rest[-1][1]["type"] == "done"
    assert tokens(first) + tokens([frame for _, frame in rest]) == long_answer(), "no gap, no duplicate"
    answer = wait_answer(http, session_id, user)
    assert answer["status"] == "complete" and answer["content"] == long_answer()


def test_after_in_the_query_works_like_the_header_and_the_header_wins(http: httpx.Client) -> None:
    response, frames = post_chat(http, message="hello", user_name="query", detach="1")
    session_id = response.headers["x-session-id"]
    _, by_query = join(http, session_id, "query", after=3)
    _, both = join(http, session_id, "query", after=1, last_event_id=frames[-1]["seq"] - 1)

    assert collapsed([frame for _, frame in by_query]) == collapsed([f for f in frames if f["seq"] > 3])
    assert [frame["seq"] for _, frame in both] == [frames[-1]["seq"]]


def test_without_detach_a_disconnect_stops_the_run_with_detach_it_goes_on(http: httpx.Client) -> None:
    kept_headers, _ = start_cut(http, "detached", frames=20, detach=True)
    cut_headers, _ = start_cut(http, "attached", frames=20, detach=False)

    kept = wait_answer(http, kept_headers["x-session-id"], "detached")
    cut = wait_answer(http, cut_headers["x-session-id"], "attached")
    assert kept["status"] == "complete" and kept["content"] == long_answer()
    assert cut["status"] == "cancelled" and len(cut["content"]) < len(long_answer())
    # A joiner of the cut run sees how it ended.
    _, rest = join(http, cut_headers["x-session-id"], "attached", after=0)
    assert rest[-1][1]["type"] == "error" and rest[-1][1]["code"] == "cancelled"


def test_nothing_to_join_is_204_and_another_users_session_is_404(http: httpx.Client) -> None:
    response, _ = post_chat(http, message="hello", user_name="owner")
    session_id = response.headers["x-session-id"]
    assert join(http, session_id, "owner")[0].status_code == 200, "just ended: still joinable"
    assert join(http, session_id, "mallory")[0].status_code == 404
    assert join(http, str(uuid.uuid4()), "owner")[0].status_code == 404
    time.sleep(TTL_S + 0.5)
    assert join(http, session_id, "owner")[0].status_code == 204
    bad = http.get("/api/chat/stream", params={"session_id": session_id, "user_name": "owner", "after": "-1"})
    assert bad.status_code == 422 and bad.json()["code"] == "bad_request"


def test_ten_concurrent_followers_each_see_the_whole_stream(http: httpx.Client, api_url: str) -> None:
    started = threading.Event()
    headers: dict[str, str] = {}
    origin: list[dict[str, Any]] = []

    def originate() -> None:
        with httpx.Client(base_url=api_url, timeout=60) as client:
            fields = {"message": (None, "long answer please"), "user_name": (None, "crowd")}
            with client.stream("POST", "/api/chat", files=fields) as response:
                headers.update(response.headers)
                started.set()
                origin.extend(frame for _, frame in read_blocks(response))

    def follow(_: int) -> list[tuple[int | None, dict[str, Any]]]:
        with httpx.Client(base_url=api_url, timeout=60) as client:
            return join(client, headers["x-session-id"], "crowd")[1]

    with ThreadPoolExecutor(11) as pool:
        origin_done = pool.submit(originate)
        assert started.wait(15)
        followers = list(pool.map(follow, range(10)))
        origin_done.result(30)

    assert origin[-1]["type"] == "done"
    for frames in followers:
        seen = [frame for _, frame in frames]
        assert collapsed(seen) == collapsed(origin), "every follower: the whole stream, in order"
        assert [event_id for event_id, _ in frames] == [frame["seq"] for frame in seen]
        assert_numbered(seen)
