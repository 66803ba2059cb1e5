"""Schedule routes (spec 002, "定时任务"): list, create, read, update, delete, pause, resume, run, runs.

Thin handlers over :class:`~ventapp.scheduler.service.ScheduleService`. The owner's
``user_name`` is required on every route (spec 002, "升级已有部署"), in the query string or
the JSON body (both given must agree); missing is 400. Another user's schedule is 404,
exactly like one that does not exist. Bodies are JSON objects; a bad field is 422 naming it
(``bad_cron`` adds ``field``, ``cause`` and ``reason``), and so is a field a schedule does not have
(``timezone`` other than ``SCHEDULER_TZ``'s: schedules all run in that zone). A refusal's ``message`` is in the request's
``Accept-Language`` (default zh-CN; :func:`~ventapp.api.errors.schedule_rejected_handler`), its ``detail`` English. Times are ISO 8601 in UTC with ``Z`` (``timezone`` names the zone the cron reads in).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from ventapp.agent.pipeline import MAX_USER_NAME_CHARS
from ventapp.api.deps import caller_name, user_identity
from ventapp.api.openapi import errors
from ventapp.api.wording import RequestLang
from ventapp.scheduler.public import run_public, schedule_public
from ventapp.scheduler.rules import refusal
from ventapp.scheduler.service import ScheduleService, get_service

router = APIRouter(prefix="/api/schedules", tags=["schedules"])


async def service_dep() -> ScheduleService:
    """The schedule service, or 503 while the app is starting or stopping."""
    try:
        return get_service()
    except RuntimeError:
        raise refusal(503, "busy", "schedules.error.starting", retry_after=2) from None


ServiceDep = Annotated[ScheduleService, Depends(service_dep)]


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        raise refusal(422, "bad_request", "schedules.error.body_not_object") from None
    if not isinstance(body, dict):
        raise refusal(422, "bad_request", "schedules.error.body_not_object")
    return body


def _owner(request: Request, body: dict[str, Any]) -> str:
    """The caller from ``user_name`` in the query or the body; 400 when absent or inconsistent.

    With ``AUTH_MODE`` local or header the authenticated caller (a stated name is ignored, logged).
    """
    in_query = request.query_params.get("user_name")
    in_body = body.get("user_name")
    if getattr(request.state, "caller", None) is not None:
        return caller_name(
            request, in_query if in_query is not None else in_body if isinstance(in_body, str) else None
        )
    if in_body is not None and not isinstance(in_body, str):
        raise refusal(400, "bad_request", "schedules.error.user_name_text")
    if in_query is not None and in_body is not None and in_query.strip() != in_body.strip():
        raise refusal(400, "bad_request", "schedules.error.user_name_differs")
    name = in_query if in_query is not None else in_body
    if name is None or not name.strip():
        raise refusal(400, "bad_request", "schedules.error.user_name_required")
    if len(name) > MAX_USER_NAME_CHARS:
        raise refusal(400, "bad_request", "schedules.error.user_name_too_long", limit=MAX_USER_NAME_CHARS)
    return user_identity(name)


async def _public(service: ScheduleService, schedules: list[Any], lang: str) -> list[dict[str, Any]]:
    last = await service.last_runs(schedules)
    return [schedule_public(s, service.tz, service.next_run_at(s), last.get(s.id), lang) for s in schedules]


@router.get("", responses=errors())
async def list_schedules(request: Request, service: ServiceDep, lang: RequestLang) -> dict[str, Any]:
    """The user's schedules: ``{"items": [schedule, ...]}``, oldest first."""
    user_name = _owner(request, {})
    return {"items": await _public(service, await service.list_for(user_name), lang)}


@router.post("", status_code=201, responses=errors(state_changing=True))
async def create_schedule(request: Request, service: ServiceDep, lang: RequestLang) -> dict[str, Any]:
    """Create from ``{name, prompt, cron, mode?="full", enabled?=true, lang?}``; 201 with the schedule.

    Its runs answer and word their figures in ``lang`` (``"zh-CN"`` or ``"en"``; anything else is
    422 naming ``lang``), by default in the request's ``Accept-Language`` (default zh-CN). Any other
    field (but ``user_name``, and a ``timezone`` naming the zone schedules run in) is 422 naming it.
    """
    body = await _body(request)
    schedule = await service.create(_owner(request, body), body, lang)
    return (await _public(service, [schedule], lang))[0]


@router.get("/{schedule_id}", responses=errors(404))
async def get_schedule(
    schedule_id: str, request: Request, service: ServiceDep, lang: RequestLang
) -> dict[str, Any]:
    """One of the user's schedules; 404 otherwise."""
    schedule = await service.owned(schedule_id, _owner(request, {}))
    return (await _public(service, [schedule], lang))[0]


@router.put("/{schedule_id}", responses=errors(404, state_changing=True))
async def update_schedule(
    schedule_id: str, request: Request, service: ServiceDep, lang: RequestLang
) -> dict[str, Any]:
    """Change any subset of ``{name, prompt, cron, mode, enabled, lang}``; 404 / 422 (any other field too)."""
    body = await _body(request)
    schedule = await service.update(schedule_id, _owner(request, body), body)
    return (await _public(service, [schedule], lang))[0]


@router.delete("/{schedule_id}", responses=errors(404, state_changing=True))
async def delete_schedule(schedule_id: str, request: Request, service: ServiceDep) -> dict[str, Any]:
    """Delete the schedule and its run records (the sessions its runs created stay)."""
    await service.delete(schedule_id, _owner(request, await _body(request)))
    return {"deleted": True, "id": schedule_id}


@router.post("/{schedule_id}/pause", responses=errors(404, state_changing=True))
async def pause_schedule(
    schedule_id: str, request: Request, service: ServiceDep, lang: RequestLang
) -> dict[str, Any]:
    """Stop firing (``enabled: false``); "run now" still works."""
    schedule = await service.set_enabled(schedule_id, _owner(request, await _body(request)), False)
    return (await _public(service, [schedule], lang))[0]


@router.post("/{schedule_id}/resume", responses=errors(404, state_changing=True))
async def resume_schedule(
    schedule_id: str, request: Request, service: ServiceDep, lang: RequestLang
) -> dict[str, Any]:
    """Fire again from the next tick (ticks while paused are not missed)."""
    schedule = await service.set_enabled(schedule_id, _owner(request, await _body(request)), True)
    return (await _public(service, [schedule], lang))[0]


@router.post("/{schedule_id}/run", status_code=202, responses=errors(404, 409, 429, state_changing=True))
async def run_schedule(schedule_id: str, request: Request, service: ServiceDep) -> dict[str, Any]:
    """Run now: 202 ``{run_id, session_id}`` at once; the run goes on in the background.

    409 ``schedule_busy`` while an execution of it runs; the pipeline's refusals (429 quota
    or gate, 503 unpriced model) are answered with their status and recorded as ``rejected``.
    """
    handoff = await service.run_now(schedule_id, _owner(request, await _body(request)))
    return {"run_id": handoff.run_id, "session_id": handoff.session_id, "schedule_id": schedule_id}


@router.get("/{schedule_id}/runs", responses=errors(404))
async def schedule_runs(
    schedule_id: str, request: Request, service: ServiceDep, lang: RequestLang
) -> dict[str, Any]:
    """``{"items": [{run_id, session_id, trigger, scheduled_for, status, started_at, finished_at,
    error, error_code, error_detail, usage}]}``, newest first (the latest 50); ``error`` in the
    ``Accept-Language``'s language (English: as stored), ``error_detail`` English."""
    records = await service.runs(schedule_id, _owner(request, {}))
    return {"items": [run_public(record, lang) for record in records]}
