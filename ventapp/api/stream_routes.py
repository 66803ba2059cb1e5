"""``GET /api/chat/stream``: join a session's live (or just-finished) run (issue 11).

A client that lost its connection, or one that never had it (a second tab, another
device), reads the run's numbered frames from its log: those after ``Last-Event-ID`` (or
``?after=``; without either, from the oldest frame still kept), then the live ones, then the
end — no gap and no duplicate. Leaving never stops the run.
"""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Header, Query, Response
from fastapi.responses import StreamingResponse

from ventapp.agent.admission_checks import owned_session
from ventapp.agent.live_runs import live_state
from ventapp.agent.refusals import rejected, session_not_found
from ventapp.agent.run_log import LogGap
from ventapp.api.deps import MAX_WHOLE, CurrentUser, RuntimeDep
from ventapp.api.openapi import SSE_JOIN_RESPONSE, errors
from ventapp.api.sse import stream_join
from ventapp.api.wording import RequestLang

router = APIRouter(prefix="/api/chat", tags=["chat"])


@router.get(
    "/stream",
    response_class=StreamingResponse,
    responses={
        **SSE_JOIN_RESPONSE,
        204: {"description": "Nothing is running in the session and nothing ended recently"},
        **errors(404, 410),
    },
)
async def join(
    runtime: RuntimeDep,
    user_name: CurrentUser,
    lang: RequestLang,
    session_id: Annotated[str, Query(description="The session whose run to join")],
    after: Annotated[
        int | None,
        Query(
            ge=0,
            le=MAX_WHOLE,
            description="The last seq already received (default: from the oldest frame still kept)",
        ),
    ] = None,
    last_event_id: Annotated[
        int | None,
        Header(
            alias="Last-Event-ID",
            ge=0,
            le=MAX_WHOLE,
            description="As `after`; sent by EventSource on reconnect; wins",
        ),
    ] = None,
) -> Response:
    """Stream the session's current (or just-ended) run from after the given ``seq``.

    SSE with an ``id: <seq>`` line per frame; the frames are those of ``POST /api/chat`` (with
    ``seq``). 204 when no run is running or ended within ``RUN_LOG_TTL_S``; 404 for another
    user's or an unknown session; 410 when the frames after a given ``after`` (or
    ``Last-Event-ID``) were dropped (older than ``RUN_LOG_MAX_FRAMES``, or the paused part of a
    resumed run). Without either, the join starts at the oldest frame still kept.
    """
    try:
        canonical = str(uuid.UUID(session_id))
    except ValueError:
        raise session_not_found() from None
    # The log knows whose run it is: a join of a live run reads no database (fast under load).
    state = await live_state(runtime.run_log, canonical, user_name)
    if state is None:
        await owned_session(runtime, canonical, user_name)  # 404 unless it is the user's session
        return Response(status_code=204)
    start = last_event_id if last_event_id is not None else after
    keepalive = runtime.settings.sse_keepalive_s
    try:
        if start is None:
            # No cursor: "from what is kept". After a resume (or a trim) the oldest kept frame is
            # past 1, and a joiner that named no frame asked for none of the dropped ones (F10).
            return stream_join(
                runtime.run_log, state.run, state.first_seq - 1, keepalive, lang, from_kept=True
            )
        return stream_join(runtime.run_log, state.run, start, keepalive, lang)
    except LogGap as gap:
        raise rejected(410, "gone", "refusal.gone", first_seq=gap.first_seq) from None
    except KeyError:  # expired between the two reads
        return Response(status_code=204)
