"""``POST /api/chat/resume`` and ``GET /api/chat/interrupt`` (spec 002, "对话" and "Agent 人机交互")."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from ventapp.agent.interrupts import ResumeAnswer, rejection_message
from ventapp.agent.resume import ResumeRequest, pending_interrupt, start_resume
from ventapp.api.deps import USER_NAME_HELP, CurrentUser, RuntimeDep, caller_name
from ventapp.api.openapi import SSE_RESPONSE, errors
from ventapp.api.sse import stream_run
from ventapp.api.wording import RequestLang, worded

router = APIRouter(prefix="/api/chat", tags=["chat"])


class Decision(BaseModel):
    """One decision per tool call of the approval batch, in order."""

    type: Literal["approve", "edit", "reject"]
    args: dict[str, Any] | None = None
    message: str | None = Field(
        default=None,
        max_length=2000,
        description=(
            "With reject: the person's reason; the model reads it after a sentence saying the call"
            " was rejected, in the Accept-Language (without one: that no reason was given)"
        ),
    )
    remember: Literal["session", "always"] | None = None
    """With approve or edit: later calls of this tool run without asking, in this session or in all
    of the user's sessions (revocable with ``DELETE /api/approvals/rules/{id}``)."""


class ResumeBody(BaseModel):
    """The answer to an ``interrupt`` frame; send the part that matches its ``kind``."""

    session_id: str
    interrupt_token: str = Field(min_length=1, max_length=200)
    user_name: str | None = Field(default=None, description=USER_NAME_HELP)
    decisions: list[Decision] = Field(default_factory=list, max_length=50)
    answers: list[str] = Field(default_factory=list, max_length=3)
    approved: bool | None = None
    feedback: str = Field(default="", max_length=10_000)
    detach: bool = Field(default=False, description="True: the run goes on when the client disconnects")


def _with_reason(decision: Decision, lang: str) -> dict[str, Any]:
    """The decision as the agent takes it; a reject's message says, in ``lang``, that the person
    rejected the call and why (or that they gave no reason): the model reads it as the tool's
    result, and the tool's result line shows it."""
    answer = decision.model_dump(exclude_none=True)
    if decision.type == "reject":
        answer["message"] = rejection_message(decision.message, lang)
    return answer


@router.post(
    "/resume",
    response_class=StreamingResponse,
    responses={**SSE_RESPONSE, **errors(404, 409, 429, state_changing=True)},
)
async def resume(
    body: ResumeBody, runtime: RuntimeDep, http: Request, lang: RequestLang
) -> StreamingResponse:
    """Continue a paused run and stream the rest (same SSE contract as ``/api/chat``).

    JSON errors before streaming: 404 (not the user's session), 409 (session busy, nothing
    pending, stale or already used ``interrupt_token``), 422 (answer does not fit), 429.
    """
    answer = ResumeAnswer(
        decisions=[_with_reason(decision, lang) for decision in body.decisions],
        answers=body.answers,
        approved=body.approved,
        feedback=body.feedback,
    )
    request = ResumeRequest(
        session_id=body.session_id,
        interrupt_token=body.interrupt_token,
        user_name=caller_name(http, body.user_name),
        answer=answer,
        words_lang=lang,
    )

    return await stream_run(await start_resume(runtime, request), detach=body.detach, lang=lang)


@router.get(
    "/interrupt",
    responses={204: {"description": "Nothing is pending"}, **errors(404)},
)
async def interrupt(
    runtime: RuntimeDep, user_name: CurrentUser, lang: RequestLang, session_id: str = Query()
) -> Any:
    """The pending interrupt of the session (200, same shape as the frame, its approval reasons in the
    ``Accept-Language``) or 204 when none."""
    pending = await pending_interrupt(runtime, session_id, user_name)
    if pending is None:
        return Response(status_code=204)
    return {**worded(pending, lang).to_wire(), "session_id": session_id}
