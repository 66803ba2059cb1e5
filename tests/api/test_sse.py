"""SSE keep-alive (issue 17 item 5): a comment line while the model is silent, frames untouched."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.sse_client import read_frames
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.agent import events as ev
from ventapp.agent.run_log import LoggedRun, MemoryRunLog
from ventapp.api.sse import KEEPALIVE, encode_frames, log_frame, sse_frame
from ventapp.tools.registry import load_builtin_tools

RUN = LoggedRun(run_id="r", session_id="s", user_name="u", trace_id="t")


async def _slow_run(log: MemoryRunLog, pause_s: float = 0.25) -> None:
    await log.append(RUN.run_id, ev.Token(content="1"))
    await asyncio.sleep(pause_s)
    await log.append(RUN.run_id, ev.Token(content="2"))
    await log.close(RUN.run_id)


async def _read(interval_s: float) -> list[bytes]:
    log = MemoryRunLog()
    await log.open(RUN)
    writer = asyncio.create_task(_slow_run(log))
    out = [chunk async for chunk in encode_frames(log.batches(RUN.run_id, idle_s=interval_s), RUN)]
    await writer
    return out


async def test_silence_gets_keepalive_comments_between_frames() -> None:
    out = await _read(0.05)
    assert out[0].startswith(b"data: {") and b'"seq":1' in out[0]
    assert out[-1].startswith(b"data: {") and b'"seq":2' in out[-1]
    assert set(out[1:-1]) == {KEEPALIVE}, "only comments in between, frames unchanged and in order"
    assert KEEPALIVE == b": keep-alive\n\n"


async def test_zero_interval_sends_no_comments() -> None:
    out = await _read(0)
    assert len(out) == 2 and KEEPALIVE not in out


async def test_join_frames_carry_an_id_line_and_each_frame_is_encoded_once() -> None:
    log = MemoryRunLog()
    await log.open(RUN)
    frame = await log.append(RUN.run_id, ev.Token(content="x"))
    await log.close(RUN.run_id)
    joined = [chunk async for chunk in encode_frames(log.batches(RUN.run_id), RUN, with_id=True)]
    plain = [chunk async for chunk in encode_frames(log.batches(RUN.run_id), RUN)]

    assert joined == [b"id: 1\n" + plain[0]]
    assert plain[0] is frame.encoded, "K followers share one encoding of the frame"


async def test_a_frame_a_language_leaves_as_it_is_shares_the_bytes_encoded_once() -> None:
    """Every ``executing`` frame was re-worded and re-encoded per request, even for a Chinese one."""
    load_builtin_tools()  # the labels
    log = MemoryRunLog()
    await log.open(RUN)
    frame = await log.append(
        RUN.run_id,
        ev.Executing(
            message="正在调用计算器", cn_agent="通风智能体", tools=["calculate"], cn_tools=["计算器"]
        ),
    )
    zh = log_frame(frame, RUN, lang="zh-CN")
    assert frame.encoded is zh and log_frame(frame, RUN, lang="zh-CN") is zh, "encoded once, shared"
    assert "正在调用计算器" in json.loads(zh.removeprefix(b"data: "))["message"]
    en = log_frame(frame, RUN, lang="en")
    assert json.loads(en.removeprefix(b"data: "))["message"] == "Calling Calculator…"
    assert frame.encoded is zh, "an English request's own wording is not the shared bytes"


async def test_a_backlog_goes_out_in_one_chunk_with_its_texts_merged_in_order() -> None:
    """Issue 18: a client that is behind gets one write, not one per frame, and consecutive token
    frames as one (clients append ``content``), numbered as the last; other frames unchanged."""
    log = MemoryRunLog()
    await log.open(RUN)
    events = [
        ev.Token(content="a "),
        ev.Token(content="b "),
        ev.ThinkingToken(content="想"),
        ev.ThinkingToken(content="一想"),
        ev.Token(content="c "),
        ev.Progress(message="半程"),
        ev.Token(content="d "),
        ev.Token(content="e"),
    ]
    frames = [await log.append(RUN.run_id, event) for event in events]
    await log.close(RUN.run_id)

    chunks = [chunk async for chunk in encode_frames(log.batches(RUN.run_id), RUN, with_id=True)]
    assert len(chunks) == 1, "one write for the backlog"
    sent = [
        (int(block.split(b"\n")[0].removeprefix(b"id: ")), json.loads(block.split(b"\ndata: ")[1]))
        for block in chunks[0].split(b"\n\n")
        if block
    ]
    assert [(seq, wire["type"], wire.get("content")) for seq, wire in sent] == [
        (2, "token", "a b "),
        (4, "thinking_token", "想一想"),
        (5, "token", "c "),
        (6, "progress", None),
        (8, "token", "d e"),
    ]
    assert all(wire["seq"] == seq and wire["session_id"] == "s" for seq, wire in sent)
    assert "".join(w["content"] for _, w in sent if w["type"] == "token") == "a b c d e", "same answer"
    assert frames[4].encoded is not None and frames[4].encoded in chunks[0], (
        "a lone frame keeps its shared bytes"
    )

    later = [chunk async for chunk in encode_frames(log.batches(RUN.run_id, after=7), RUN, with_id=True)]
    assert later == [b"id: 8\n" + sse_frame(events[7], session_id="s", trace_id="t", seq=8)], (
        "Last-Event-ID 7 gets frame 8 alone, as it was"
    )


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


@pytest.mark.parametrize(
    "event",
    [
        ev.Token(content='风量 "quoted" \\ back\nline\ttab\x01\x7f \u2028 é 🙂'),
        ev.ToolCall(tool_call_id="c", tool="t", cn_tool="工具", args={"q": 10**30, "n": [1.5, None, True]}),
    ],
)
def test_frames_are_the_json_the_standard_library_writes(event: ev.ContractEvent) -> None:
    """Issue 18: the fast encoder changes no byte of a frame's text, and an integer beyond 64 bits
    in a tool's arguments still encodes."""
    frame = sse_frame(event, session_id="s", trace_id="t", seq=3)
    expected = {**event.to_wire(), "session_id": "s", "trace_id": "t", "seq": 3}
    assert (
        frame
        == b"data: " + json.dumps(expected, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"
    )
