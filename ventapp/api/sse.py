"""SSE framing: the one function that writes ``data:`` lines (spec 000 §四).

A frame is ``data: {json}\\n\\n`` where the JSON is the event's wire dict plus
``session_id`` and ``trace_id``.
"""

from __future__ import annotations

import json

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
