"""SSE framing: the one function that writes ``data:`` lines (spec 000 §四).

A frame is ``data: {json}\\n\\n`` where the JSON is the event's wire dict plus
``session_id`` and ``trace_id``. While the model is silent (a long first token, a slow
tool) the stream sends an SSE comment, ``: keep-alive\\n\\n``, every ``SSE_KEEPALIVE_S``
seconds without a frame, so proxies with an idle timeout do not cut it; SSE parsers
ignore comment lines, so the contract's frames are untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from ventapp.agent.chat_run import ChatRun
from ventapp.agent.events import ContractEvent

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}
"""Headers every event stream carries (no proxy buffering, no caching)."""

KEEPALIVE = b": keep-alive\n\n"
"""The SSE comment sent when no frame went out for ``SSE_KEEPALIVE_S`` seconds."""

_END = object()


def sse_frame(event: ContractEvent, *, session_id: str, trace_id: str | None) -> bytes:
    """Encode one contract event as an SSE frame (UTF-8 bytes)."""
    payload = event.to_wire()
    payload["session_id"] = session_id
    if trace_id:
        payload["trace_id"] = trace_id
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


async def with_keepalive(frames: AsyncIterator[bytes], interval_s: float) -> AsyncIterator[bytes]:
    """Pass ``frames`` through, adding :data:`KEEPALIVE` after ``interval_s`` seconds of silence.

    The source is read by a helper task into a queue, so waiting with a timeout never
    cancels the source itself (cancelling an async generator mid-step would end the run).
    Leaving early (the client went away) cancels the helper, which closes the source.

    Args:
        frames: The encoded frames.
        interval_s: Seconds of silence before a comment; 0 turns keep-alives off.
    """
    if interval_s <= 0:
        async for frame in frames:
            yield frame
        return
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def drain() -> None:
        try:
            async for frame in frames:
                queue.put_nowait(frame)
        finally:
            queue.put_nowait(_END)

    reader = asyncio.create_task(drain(), name="sse-reader")
    try:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                try:
                    async with asyncio.timeout(interval_s):
                        item = await queue.get()
                except TimeoutError:
                    yield KEEPALIVE
                    continue
            if item is _END:
                break
            yield item  # type: ignore[misc]  # the queue holds frames otherwise
        await reader  # a failure of the source surfaces here, as it would without keep-alives
    finally:
        if not reader.done():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


def stream_run(run: ChatRun) -> StreamingResponse:
    """The SSE response of an admitted run, with the contract's headers.

    When the client goes away Starlette cancels the body iterator, which stops and
    finalises the run (``cancelled``); ``release`` frees the run's slot if the body never
    started. The response ends right after the closing frame (``done``, ``error`` or
    ``interrupt``): the run saves its answer before that frame, not after it.
    """

    async def frames() -> AsyncIterator[bytes]:
        async for event in run.events():
            yield sse_frame(event, session_id=run.session_id, trace_id=run.trace_id)

    headers = {
        **SSE_HEADERS,
        "X-Session-Id": run.session_id,
        "X-Trace-Id": run.trace_id,
        "X-Run-Id": run.run_id,
    }
    return StreamingResponse(
        with_keepalive(frames(), run.runtime.settings.sse_keepalive_s),
        media_type="text/event-stream",
        headers=headers,
        background=BackgroundTask(run.release),
    )
