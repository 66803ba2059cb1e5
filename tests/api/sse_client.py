"""Reads an SSE response the way a client does: ``data: {json}\\n\\n`` frames, and comments.

A block whose lines all start with ``:`` is an SSE comment (``: keep-alive``); parsers
ignore it, so this reader skips it too (and counts it, for the tests that look for it).
"""

from __future__ import annotations

import json
from typing import Any

import httpx


def is_comment(block: str) -> bool:
    """True for an SSE comment block (every line starts with ``:``), which parsers ignore."""
    return all(line.startswith(":") for line in block.split("\n"))


def read_frames(response: httpx.Response, comments: list[str] | None = None) -> list[dict[str, Any]]:
    """Parse every frame of a streamed response; fails on any line that is not framing.

    Args:
        response: A streamed ``text/event-stream`` response.
        comments: If given, comment blocks (``: keep-alive``) are appended to it.
    """
    buffer = ""
    frames: list[dict[str, Any]] = []
    for text in response.iter_text():
        buffer += text
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            if is_comment(block):
                if comments is not None:
                    comments.append(block)
                continue
            assert block.startswith("data: "), f"not an SSE data frame: {block!r}"
            assert "\n" not in block, f"frame spans several lines: {block!r}"
            frames.append(json.loads(block[len("data: ") :]))
    assert buffer == "", f"stream ended mid-frame: {buffer!r}"
    return frames


def post_chat(client: httpx.Client, **fields: str) -> tuple[httpx.Response, list[dict[str, Any]]]:
    """POST /api/chat as multipart and read the whole stream (or the JSON error body)."""
    files = {key: (None, value) for key, value in fields.items()}
    with client.stream("POST", "/api/chat", files=files) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response, read_frames(response)
        response.read()
        return response, []


TEXT_TYPES = ("token", "thinking_token")
"""Frames whose ``content`` clients append: a stream may carry consecutive ones as one (issue 18)."""


def collapsed(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``frames`` with each run of consecutive same-type text frames as one (content joined, last seq).

    Two reads of one run (live, and a join that got its backlog at once) carry the same frames
    seen this way, however the server merged the texts of a client that was behind.
    """
    out: list[dict[str, Any]] = []
    for frame in frames:
        if out and frame["type"] in TEXT_TYPES and out[-1]["type"] == frame["type"]:
            out[-1] = {**frame, "content": out[-1]["content"] + frame["content"]}
        else:
            out.append(dict(frame))
    return out


def assert_numbered(frames: list[dict[str, Any]], first: int = 1) -> None:
    """``seq`` rises from ``first``; a number is skipped only by a text frame that carries it
    (merged texts are numbered as their last part)."""
    expected = first
    for frame in frames:
        if frame["type"] in TEXT_TYPES:
            assert frame["seq"] >= expected, [f["seq"] for f in frames]
        else:
            assert frame["seq"] == expected, [f["seq"] for f in frames]
        expected = frame["seq"] + 1
