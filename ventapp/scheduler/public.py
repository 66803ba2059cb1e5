"""Schedules and their runs as JSON (the API's shapes; the UI formats the same records).

Every time is ISO 8601 with its offset, in ``SCHEDULER_TZ`` (``2026-12-01T08:00:00+08:00``).
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any

from ventapp.db.schedule_models import Schedule
from ventapp.db.schedule_store import RunRecord


def iso(moment: datetime | None, tz: tzinfo) -> str | None:
    """``moment`` (aware, or naive UTC as stored) in ``tz`` as ISO 8601 with offset; None stays None."""
    if moment is None:
        return None
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    return aware.astimezone(tz).isoformat()


def run_public(record: RunRecord, tz: tzinfo) -> dict[str, Any]:
    """``{id, run_id, session_id, trigger, scheduled_for, status, started_at, finished_at, error,
    error_code, usage{input_tokens, output_tokens, total_tokens, cost_micros, currency}}``.

    ``run_id``/``session_id`` are null for a tick that never reached the pipeline
    (``skipped``, ``missed``, ``rejected``).
    """
    return {
        "id": record.id,
        "run_id": record.run_id,
        "session_id": record.session_id,
        "trigger": record.trigger,
        "scheduled_for": iso(record.scheduled_for, tz),
        "status": record.status,
        "started_at": iso(record.started_at, tz),
        "finished_at": iso(record.finished_at, tz),
        "error": record.error,
        "error_code": record.error_code,
        "usage": {
            "input_tokens": record.input_tokens,
            "output_tokens": record.output_tokens,
            "total_tokens": record.input_tokens + record.output_tokens,
            "cost_micros": record.cost_micros,
            "currency": record.currency,
        },
    }


def schedule_public(
    schedule: Schedule, tz: tzinfo, next_run_at: datetime | None, last_run: RunRecord | None
) -> dict[str, Any]:
    """``{id, user_name, name, prompt, cron, mode, enabled, timezone, next_run_at, last_run,
    created_at, updated_at}``; ``last_run`` is a :func:`run_public` object or null."""
    return {
        "id": schedule.id,
        "user_name": schedule.user_name,
        "name": schedule.name,
        "prompt": schedule.prompt,
        "cron": schedule.cron,
        "mode": schedule.mode,
        "enabled": schedule.enabled,
        "timezone": str(tz),
        "next_run_at": iso(next_run_at, tz),
        "last_run": run_public(last_run, tz) if last_run is not None else None,
        "created_at": iso(schedule.created_at, tz),
        "updated_at": iso(schedule.updated_at, tz),
    }
