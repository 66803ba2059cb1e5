"""Nothing lost when the database cannot be written (issue 17 item 3), reproduced as reported:

another connection holds an exclusive lock on the SQLite file (``BEGIN EXCLUSIVE``) while a
run streams, for a short time (released mid-run) and for a long time (released after the
run ended). Over real HTTP against the scripted model; the database is read directly.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.db import billing_store, chat_store
from ventapp.db.billing_models import UsageDaily
from ventapp.db.engine import make_engine

TWO_CALLS = (
    {"tool_calls": [{"name": "calculate", "arguments": {"expression": "(12+8)*3"}}]},
    {"content": long_answer(120)},
)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ScriptedServer, ApiServer, Path]]:
    data = tmp_path_factory.mktemp("data")
    env = {
        **app_env(data, None),
        "DB_BUSY_TIMEOUT_S": "0.5",
        "WRITEBACK_INTERVAL_S": "0.3",
        "ANSWER_SAVE_INTERVAL_S": "0.2",
    }
    with ScriptedServer(delay_ms=20) as llm:
        env.update(OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY="scripted")
        with patched_env(env), ApiServer() as api:
            yield llm, api, data


@pytest.fixture
def engine(setup: tuple[ScriptedServer, ApiServer, Path]) -> Iterator[sa.Engine]:
    reader = make_engine(f"sqlite:///{setup[2] / 'ventagent.db'}")
    yield reader
    reader.dispose()


class FileLock:
    """``BEGIN EXCLUSIVE`` on the database file from a connection of its own."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.held = False

    def take(self) -> None:
        self._db.execute("BEGIN EXCLUSIVE")
        self.held = True

    def release(self) -> None:
        if self.held:
            self._db.execute("ROLLBACK")
            self.held = False
        self._db.close()


def _stream_chat(
    url: str, user: str, on_frame: Callable[[dict[str, Any]], None]
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    frames: list[dict[str, Any]] = []
    with httpx.Client(base_url=url, timeout=60) as client:
        files = {"message": (None, "please calculate (12+8)*3"), "user_name": (None, user)}
        with client.stream("POST", "/api/chat", files=files) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    frames.append(json.loads(line[len("data: ") :]))
                    on_frame(frames[-1])
    return response, frames


def _wait_for(condition: Callable[[], bool], timeout_s: float = 20) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def _assert_written_back_exactly_once(
    engine: sa.Engine, url: str, user: str, response: httpx.Response, frames: list[dict[str, Any]]
) -> None:
    run_id, session_id = response.headers["x-run-id"], response.headers["x-session-id"]
    streamed = "".join(frame["content"] for frame in frames if frame["type"] == "token")

    def answer_saved() -> bool:
        run = chat_store.get_run(engine, run_id)
        return (
            run is not None
            and run.status == "success"
            and len(billing_store.ledger_for_run(engine, run_id)) == 2
        )

    # Parked in the spool when the lock still held, written back every WRITEBACK_INTERVAL_S; parked in
    # billing_pending when the lock lifted in between (a loaded machine), retried every minute (spec 002).
    assert _wait_for(answer_saved, timeout_s=75), "the parked answer and usage were not written back"
    history = httpx.get(f"{url}/api/chat/history/{session_id}", params={"user_name": user}).json()
    answers = [m for m in history["messages"] if m["role"] == "assistant"]
    assert len(answers) == 1 and answers[0]["content"] == streamed and answers[0]["status"] == "complete"
    assert [card["content"] for card in answers[0]["tool_calls"]] == ["60"]
    rows = billing_store.ledger_for_run(engine, run_id)
    assert len({row.id for row in rows}) == 2, "one ledger row per model call, each once"
    with Session(engine) as db:
        daily = db.exec(select(UsageDaily).where(UsageDaily.user_name == user)).all()
    assert sum(d.input_tokens for d in daily) == sum(row.input_tokens for row in rows) > 0
    assert sum(d.output_tokens for d in daily) == sum(row.output_tokens for row in rows) > 0
    assert sum(d.calls for d in daily) == 2
    assert answers[0]["usage"]["input_tokens"] == sum(row.input_tokens for row in rows)
    health = httpx.get(f"{url}/health").json()
    assert health["database"] == "ok" and health["spool"] == 0


def test_short_lock_mid_run_loses_nothing(
    setup: tuple[ScriptedServer, ApiServer, Path], engine: sa.Engine
) -> None:
    """Locked while the first call ends (its settlement is parked), released mid-answer."""
    llm, api, data = setup
    llm.reset()
    llm.push(*TWO_CALLS)
    lock = FileLock(data / "ventagent.db")
    release_timer: threading.Timer | None = None

    def on_frame(frame: dict[str, Any]) -> None:
        nonlocal release_timer
        if frame["type"] == "thinking" and not lock.held:
            lock.take()  # the first model call is still streaming its tool call
            release_timer = threading.Timer(1.5, lock.release)
            release_timer.start()

    try:
        response, frames = _stream_chat(api.url, "short-lock", on_frame)
    finally:
        if release_timer is not None:
            release_timer.join()
        lock.release()
    assert frames[-1]["type"] == "done", frames[-1]
    _assert_written_back_exactly_once(engine, api.url, "short-lock", response, frames)


def test_long_lock_ends_with_storage_error_and_everything_is_written_back_later(
    setup: tuple[ScriptedServer, ApiServer, Path], engine: sa.Engine
) -> None:
    """Locked for the whole run: no `done` for an unsaved answer, a quick 503, `down` health, then write-back."""
    llm, api, data = setup
    llm.reset()
    llm.push(*TWO_CALLS)
    lock = FileLock(data / "ventagent.db")
    result: dict[str, Any] = {}

    def on_frame(frame: dict[str, Any]) -> None:
        if frame["type"] == "thinking" and not lock.held:
            lock.take()

    def consume() -> None:
        result["response"], result["frames"] = _stream_chat(api.url, "long-lock", on_frame)

    reader = threading.Thread(target=consume)
    reader.start()
    try:
        # The stream ends while the lock is still held: it does not wait for the database.
        reader.join(60)
        assert not reader.is_alive(), "the stream stayed open after its last frame"
        response, frames = result["response"], result["frames"]
        assert lock.held
        types = [frame["type"] for frame in frames]
        assert "done" not in types, "done promised an answer that was never saved"
        assert frames[-1]["type"] == "error" and frames[-1]["code"] == "storage"
        assert "token" in types
        run = chat_store.get_run(engine, response.headers["x-run-id"])
        assert run is not None and run.status == "running"

        health = httpx.get(f"{api.url}/health", timeout=30).json()
        assert health["database"] == "down" and health["status"] == "error" and health["spool"] >= 1

        started = time.monotonic()
        refused = httpx.post(
            f"{api.url}/api/chat",
            files={"message": (None, "hello"), "user_name": (None, "other")},
            timeout=30,
        )
        assert refused.status_code == 503 and refused.json()["code"] == "storage"
        assert refused.json()["message"] and refused.headers["retry-after"]
        assert time.monotonic() - started < 15, "refused only after the old 30 s lock timeout"
    finally:
        lock.release()
    _assert_written_back_exactly_once(engine, api.url, "long-lock", response, frames)
