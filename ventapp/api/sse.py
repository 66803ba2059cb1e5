"""SSE framing: the one place that writes ``data:`` lines (spec 000 §四).

A frame is ``data: {json}\\n\\n`` where the JSON is the event's wire dict plus ``session_id``,
``trace_id`` and ``seq`` (the frame's number in its run, issue 11: additive, the 1.5 frontend
ignores it). ``GET /api/chat/stream`` adds the standard ``id: <seq>`` line before each
``data:`` line, so a browser's ``EventSource`` reconnects with ``Last-Event-ID`` by itself;
``POST /api/chat`` and ``/api/chat/resume`` keep exactly the legacy ``data: {json}\\n\\n``.

Every stream reads the run's log (:mod:`ventapp.agent.live_runs`), never the run itself.
An ``interrupt`` frame's approval reasons are worded in the language of the request that
streams it (``Accept-Language``, :mod:`ventapp.api.wording`), so it is encoded per stream;
every other frame's bytes are encoded once and shared by every client that follows the run.
While the model is silent (a long first token, a slow tool) the stream sends an SSE
comment, ``: keep-alive\\n\\n``, every ``SSE_KEEPALIVE_S`` seconds without a frame, so
proxies with an idle timeout do not cut it; SSE parsers ignore comment lines.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import orjson
from fastapi.responses import StreamingResponse

from ventapp.agent.chat_run import ChatRun
from ventapp.agent.errors import CLIENT_GONE
from ventapp.agent.events import ContractEvent, ThinkingToken, Token
from ventapp.agent.live_runs import go_live
from ventapp.agent.run_log import LogFrame, LoggedRun, RunLog, kept_batches
from ventapp.api.wording import needs_wording, worded
from ventapp.i18n import DEFAULT_LANG

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}
"""Headers every event stream carries (no proxy buffering, no caching)."""

KEEPALIVE = b": keep-alive\n\n"
"""The SSE comment sent when no frame went out for ``SSE_KEEPALIVE_S`` seconds."""


def _payload(event: ContractEvent, session_id: str, trace_id: str | None, seq: int | None) -> bytes:
    payload = event.to_wire()
    payload["session_id"] = session_id
    if trace_id:
        payload["trace_id"] = trace_id
    if seq is not None:
        payload["seq"] = seq
    # orjson: the same compact UTF-8 JSON for ~1/20 of json.dumps's CPU, once per frame on the
    # event loop (issue 18). What it refuses (an integer beyond 64 bits in a tool's arguments)
    # the standard library still writes.
    try:
        return orjson.dumps(payload)
    except TypeError:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def sse_frame(
    event: ContractEvent, *, session_id: str, trace_id: str | None, seq: int | None = None
) -> bytes:
    """Encode one contract event as an SSE frame (UTF-8 bytes), ``seq`` included when given."""
    return b"data: " + _payload(event, session_id, trace_id, seq) + b"\n\n"


def log_frame(frame: LogFrame, run: LoggedRun, *, with_id: bool = False, lang: str = DEFAULT_LANG) -> bytes:
    """Encode a logged frame (its JSON once per frame, however many clients follow the run).

    Args:
        frame: The numbered event.
        run: Its run (the session and trace the frame names).
        with_id: Put ``id: <seq>`` before the ``data:`` line (the join route).
        lang: The request's language (``zh-CN`` | ``en``): an approval's reasons are worded in it.
    """
    if needs_wording(frame.event, lang):
        encoded = b"data: " + _payload(worded(frame.event, lang), run.session_id, run.trace_id, frame.seq)
        encoded += b"\n\n"
    else:
        if frame.encoded is None:
            frame.encoded = (
                b"data: " + _payload(frame.event, run.session_id, run.trace_id, frame.seq) + b"\n\n"
            )
        encoded = frame.encoded
    if with_id:
        return b"id: %d\n" % frame.seq + encoded
    return encoded


async def encode_frames(
    batches: AsyncIterator[list[LogFrame] | None],
    run: LoggedRun,
    *,
    with_id: bool = False,
    lang: str = DEFAULT_LANG,
) -> AsyncIterator[bytes]:
    """Frames read from a run's log (:meth:`RunLog.batches`) as SSE bytes.

    The frames a client is behind by go out in one chunk — one write to the socket instead
    of one per frame (issue 18). Within it, consecutive ``token`` frames become one ``token``
    frame carrying their texts in order, numbered (``seq``, ``id:``) as the last of them, and
    likewise ``thinking_token`` frames: clients append ``content`` (spec 002), so the answer is
    the same, with a fraction of the frames to encode, send and parse when a client lags
    (issue 18 allows it; a lone token is never held back — only what is already waiting is
    merged). ``Last-Event-ID`` = that ``seq`` resumes after every text it carried. Every other
    frame goes out as it is. A keep-alive comment for each silence (``None``). ``lang``: as
    :func:`log_frame`.
    """
    async for batch in batches:
        if batch is None:
            yield KEEPALIVE
        elif len(batch) == 1:
            yield log_frame(batch[0], run, with_id=with_id, lang=lang)
        else:
            yield b"".join(
                [log_frame(frame, run, with_id=with_id, lang=lang) for frame in merged_texts(batch)]
            )


_TEXT_EVENTS = {"token": Token, "thinking_token": ThinkingToken}
"""The frames whose ``content`` clients append, by type: consecutive ones may travel as one."""


def merged_texts(batch: list[LogFrame]) -> list[LogFrame]:
    """``batch`` with each run of consecutive same-type text frames (:data:`_TEXT_EVENTS`) as one.

    The merged frame's ``content`` is its parts' in order and its ``seq`` the last part's; a run
    of one frame stays that very frame (its shared encoding kept). Shapes: in and out are lists
    of :class:`LogFrame`, oldest first.
    """
    out: list[LogFrame] = []
    parts: list[LogFrame] = []

    def flush() -> None:
        if len(parts) == 1:
            out.append(parts[0])
        elif parts:
            event = _TEXT_EVENTS[parts[0].event.type](content="".join(p.event.content for p in parts))
            out.append(LogFrame(parts[-1].seq, event))
        parts.clear()

    for frame in batch:
        if parts and frame.event.type != parts[0].event.type:
            flush()
        if frame.event.type in _TEXT_EVENTS:
            parts.append(frame)
        else:
            out.append(frame)
    flush()
    return out


def _headers(run: LoggedRun) -> dict[str, str]:
    return {**SSE_HEADERS, "X-Session-Id": run.session_id, "X-Trace-Id": run.trace_id, "X-Run-Id": run.run_id}


async def stream_run(run: ChatRun, *, detach: bool = False, lang: str = DEFAULT_LANG) -> StreamingResponse:
    """Start an admitted run and answer with its frames as SSE (``/api/chat``, ``/api/chat/resume``).

    The run goes on in a task of its own and the response follows its log. When the client
    goes away the run is stopped (``cancelled``, partial answer kept, spec 002), unless
    ``detach``: then it runs to its end and the client may come back through
    ``GET /api/chat/stream``. The response ends right after the closing frame (``done``,
    ``error`` or ``interrupt``), which the run sends only after saving its answer. ``lang``:
    the request's language, which an ``interrupt`` frame's approval reasons are worded in.
    """
    runtime = run.runtime
    after = await go_live(runtime.run_log, run)
    logged = LoggedRun(run.run_id, run.session_id, run.user_name, run.trace_id)

    async def frames() -> AsyncIterator[bytes]:
        finished = False
        try:
            source = runtime.run_log.batches(run.run_id, after, idle_s=runtime.settings.sse_keepalive_s)
            async for chunk in encode_frames(source, logged, lang=lang):
                yield chunk
            finished = True
        finally:
            if not finished and not detach:
                run.request_stop(CLIENT_GONE)

    return StreamingResponse(frames(), media_type="text/event-stream", headers=_headers(logged))


def stream_join(
    log: RunLog,
    run: LoggedRun,
    after: int,
    keepalive_s: float,
    lang: str = DEFAULT_LANG,
    *,
    from_kept: bool = False,
) -> StreamingResponse:
    """A joiner's SSE: the frames after ``after`` with ``id:`` lines, then the live ones, then the end.

    Leaving never stops the run. ``lang``: as :func:`stream_run`. ``from_kept``: the joiner named
    no frame (``after`` is the oldest kept one's ``seq`` minus one): a trim passing ``after`` in the
    meantime starts it at the oldest kept frame instead (:func:`~ventapp.agent.run_log.kept_batches`).

    Raises:
        KeyError: The run's log is gone.
        LogGap: Frames after ``after`` are no longer kept (checked before the response starts).
    """
    if from_kept:
        source = kept_batches(log, run.run_id, after, idle_s=keepalive_s)
    else:
        source = log.batches(run.run_id, after, idle_s=keepalive_s)
    return StreamingResponse(
        encode_frames(source, run, with_id=True, lang=lang),
        media_type="text/event-stream",
        headers=_headers(run),
    )
