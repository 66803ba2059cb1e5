"""Schedules and their runs as JSON (the API's shapes; the UI formats the same records).

Every time is ISO 8601 in UTC (``2026-12-01T00:00:00.000000Z`` for 08:00 in Beijing), as every
API timestamp (:func:`~ventapp.db.models.iso_utc`); ``timezone`` names the zone the cron reads in.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any

from ventapp.db.models import iso_utc
from ventapp.db.schedule_models import Schedule
from ventapp.db.schedule_store import RunRecord
from ventapp.i18n import DEFAULT_LANG
from ventapp.scheduler.run_errors import api_run_error


def run_public(record: RunRecord, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """``{id, run_id, session_id, trigger, scheduled_for, status, started_at, finished_at, error,
    error_code, error_detail, usage{input_tokens, output_tokens, total_tokens, cost_micros, currency}}``.

    ``run_id``/``session_id`` are null for a tick that never reached the pipeline
    (``skipped``, ``missed``, ``rejected``). ``error`` says why the run failed or did not run in
    ``lang`` (the request's ``Accept-Language``; English: as stored), ``error_detail`` the stored
    English sentence (additive), ``error_code`` what it means; all null for a run without error.
    """
    return {
        "id": record.id,
        "run_id": record.run_id,
        "session_id": record.session_id,
        "trigger": record.trigger,
        "scheduled_for": iso_utc(record.scheduled_for),
        "status": record.status,
        "started_at": iso_utc(record.started_at),
        "finished_at": iso_utc(record.finished_at),
        "error": api_run_error(record.error_code, record.error, lang),
        "error_code": record.error_code,
        "error_detail": record.error,
        "usage": {
            "input_tokens": record.input_tokens,
            "output_tokens": record.output_tokens,
            "total_tokens": record.input_tokens + record.output_tokens,
            "cost_micros": record.cost_micros,
            "currency": record.currency,
        },
    }


def schedule_public(
    schedule: Schedule,
    tz: tzinfo,
    next_run_at: datetime | None,
    last_run: RunRecord | None,
    lang: str = DEFAULT_LANG,
) -> dict[str, Any]:
    """``{id, user_name, name, prompt, cron, mode, enabled, lang, timezone, next_run_at, last_run,
    created_at, updated_at}``; ``last_run`` is a :func:`run_public` object (its ``error`` in the
    request's language ``lang``) or null.

    ``lang`` is the language its runs word their figures in (``"zh-CN"`` or ``"en"``; a schedule
    saved before it was kept reads as ``"zh-CN"``, as its runs do).
    """
    return {
        "id": schedule.id,
        "user_name": schedule.user_name,
        "name": schedule.name,
        "prompt": schedule.prompt,
        "cron": schedule.cron,
        "mode": schedule.mode,
        "enabled": schedule.enabled,
        "lang": schedule.lang or DEFAULT_LANG,
        "timezone": str(tz),
        "next_run_at": iso_utc(next_run_at),
        "last_run": run_public(last_run, lang) if last_run is not None else None,
        "created_at": iso_utc(schedule.created_at),
        "updated_at": iso_utc(schedule.updated_at),
    }
