"""SSE keep-alive (issue 17 item 5): a comment line while the model is silent, frames untouched."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.sse_client import read_frames
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.api.sse import KEEPALIVE, with_keepalive


async def _slow_source(closed: list[bool], pause_s: float = 0.25) -> AsyncIterator[bytes]:
    try:
        yield b"data: 1\n\n"
        await asyncio.sleep(pause_s)
        yield b"data: 2\n\n"
    finally:
        closed.append(True)


async def test_silence_gets_keepalive_comments_between_frames() -> None:
    out = [chunk async for chunk in with_keepalive(_slow_source([]), 0.05)]
    assert out[0] == b"data: 1\n\n" and out[-1] == b"data: 2\n\n"
    assert set(out[1:-1]) == {KEEPALIVE}, "only comments in between, frames unchanged and in order"
    assert KEEPALIVE == b": keep-alive\n\n"


async def test_zero_interval_sends_no_comments() -> None:
    out = [chunk async for chunk in with_keepalive(_slow_source([], 0.1), 0)]
    assert out == [b"data: 1\n\n", b"data: 2\n\n"]


async def test_leaving_early_closes_the_source() -> None:
    """A departed client must still stop the run: the wrapper closes what it reads."""
    closed: list[bool] = []
    stream = with_keepalive(_slow_source(closed, pause_s=5), 0.05)
    assert await anext(stream) == b"data: 1\n\n"
    await stream.aclose()
    assert closed == [True]


@pytest.fixture(scope="module")
def slow_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ScriptedServer, ApiServer]]:
    with ScriptedServer(delay_ms=300) as llm:
        env = {**app_env(tmp_path_factory.mktemp("data"), llm.base_url), "SSE_KEEPALIVE_S": "0.1"}
        with patched_env(env), ApiServer() as api:
            yield llm, api


def test_chat_stream_sends_keepalive_while_the_model_is_silent(
    slow_api: tuple[ScriptedServer, ApiServer], tmp_path: Path
) -> None:
    llm, api = slow_api
    llm.push({"content": "slow words here"})
    comments: list[str] = []
    with httpx.Client(base_url=api.url, timeout=30) as client:
        files = {"message": (None, "hi"), "user_name": (None, "keepalive")}
        with client.stream("POST", "/api/chat", files=files) as response:
            frames = read_frames(response, comments)
    assert comments and set(comments) == {": keep-alive"}
    assert frames[-1]["type"] == "done"
    assert "".join(f["content"] for f in frames if f["type"] == "token") == "slow words here"
