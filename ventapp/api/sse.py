"""SSE framing: the one function that writes ``data:`` lines (spec 000 §四).

A frame is ``data: {json}\\n\\n`` where the JSON is the event's wire dict plus
``session_id`` and ``trace_id``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from ventapp.agent.chat_run import ChatRun
from ventapp.agent.events import ContractEvent

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}
"""Headers every event stream carries (no proxy buffering, no caching)."""


def sse_frame(event: ContractEvent, *, session_id: str, trace_id: str | None) -> bytes:
    """Encode one contract event as an SSE frame (UTF-8 bytes)."""
    payload = event.to_wire()
    payload["session_id"] = session_id
    if trace_id:
        payload["trace_id"] = trace_id
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


def stream_run(run: ChatRun) -> StreamingResponse:
    """The SSE response of an admitted run, with the contract's headers.

    When the client goes away Starlette cancels the body iterator, which stops and
    finalises the run (``cancelled``); ``release`` frees the run's slot if the body never
    started.
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
        frames(), media_type="text/event-stream", headers=headers, background=BackgroundTask(run.release)
    )
