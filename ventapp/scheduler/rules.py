"""What a schedule may hold, and the refusals the schedule routes answer with.

Refusals are :class:`ScheduleRejected`, a :class:`~ventapp.agent.pipeline.ChatRejected`,
so both the API (``{detail, message, code}`` with the status) and the UI (the sentence)
show them the way they show any other refused request.
"""

from __future__ import annotations

from datetime import tzinfo
from typing import Any

from ventapp.agent.pipeline import MAX_MESSAGE_CHARS, ChatRejected
from ventapp.db.schedule_models import SCHEDULE_MODES
from ventapp.scheduler.cron import parse_cron
from ventapp.scheduler.cron_problems import CronInvalid, cron_message

MAX_NAME_CHARS = 200
MAX_CRON_CHARS = 120
WRITABLE = ("name", "prompt", "cron", "mode", "enabled")
"""Fields a client may set (POST needs name, prompt and cron; PUT takes any subset)."""


class ScheduleRejected(ChatRejected):
    """A schedule request refused before anything changed (400, 404, 409, 422, 429, 503).

    Attributes:
        cron_problem: For ``bad_cron``, the refusal itself, so the UI can word it in the page's
            language (``message`` is English, for the API); None otherwise.
    """

    cron_problem: CronInvalid | None = None


def not_found() -> ScheduleRejected:
    """The one answer for a schedule that does not exist or is another user's."""
    return ScheduleRejected(404, "not_found", "Schedule not found.")


def bad_cron(problem: CronInvalid) -> ScheduleRejected:
    """422 ``bad_cron``: one English sentence for the cause, plus ``field``, ``cause`` and ``reason``.

    ``cause`` is the code the UI words in the page's language (see
    :mod:`ventapp.scheduler.cron_problems`); ``reason`` is the parser's detail, for logs.
    """
    refused = ScheduleRejected(
        422,
        "bad_cron",
        cron_message(problem, "en"),
        details={"field": problem.field, "cause": problem.cause, "reason": problem.reason},
    )
    refused.cron_problem = problem
    return refused


def _text(fields: dict[str, Any], key: str, limit: int) -> str:
    value = fields[key]
    if not isinstance(value, str) or not value.strip():
        raise ScheduleRejected(422, "bad_request", f"{key} must be non-empty text.", details={"field": key})
    if len(value) > limit:
        raise ScheduleRejected(
            422, "bad_request", f"{key} must be at most {limit} characters.", details={"field": key}
        )
    return value.strip() if key == "name" else value


def validated(fields: dict[str, Any], tz: tzinfo, *, partial: bool) -> dict[str, Any]:
    """The writable fields of a create (``partial=False``) or update request, checked.

    Args:
        fields: The request's JSON object (unknown keys and ``user_name`` are ignored).
        tz: ``SCHEDULER_TZ`` (the never-firing check needs a zone).
        partial: True for an update (any subset); False requires name, prompt and cron.

    Returns:
        Column -> value for the fields present (the cron expression with single spaces).

    Raises:
        ScheduleRejected: 422 ``bad_request`` naming the field, or ``bad_cron``.
    """
    if not partial:
        missing = [key for key in ("name", "prompt", "cron") if key not in fields]
        if missing:
            raise ScheduleRejected(
                422, "bad_request", f"Missing field(s): {', '.join(missing)}.", details={"field": missing[0]}
            )
    values: dict[str, Any] = {}
    if "name" in fields:
        values["name"] = _text(fields, "name", MAX_NAME_CHARS)
    if "prompt" in fields:
        values["prompt"] = _text(fields, "prompt", MAX_MESSAGE_CHARS)
    if "cron" in fields:
        cron = fields["cron"]
        if not isinstance(cron, str):
            raise bad_cron(CronInvalid("cron", "the expression must be text such as '0 8 * * *'", "not_text"))
        if len(cron) > MAX_CRON_CHARS:
            raise bad_cron(
                CronInvalid(
                    "cron",
                    f"the expression must be at most {MAX_CRON_CHARS} characters",
                    "too_long",
                    limit=MAX_CRON_CHARS,
                )
            )
        try:
            parse_cron(cron, tz)
        except CronInvalid as problem:
            raise bad_cron(problem) from None
        values["cron"] = " ".join(cron.split())
    if "mode" in fields:
        if fields["mode"] not in SCHEDULE_MODES:
            raise ScheduleRejected(
                422, "bad_request", "mode must be 'plan' or 'full'.", details={"field": "mode"}
            )
        values["mode"] = fields["mode"]
    if "enabled" in fields:
        if not isinstance(fields["enabled"], bool):
            raise ScheduleRejected(
                422, "bad_request", "enabled must be true or false.", details={"field": "enabled"}
            )
        values["enabled"] = fields["enabled"]
    if partial and not values:
        raise ScheduleRejected(
            422, "bad_request", f"Send at least one of: {', '.join(WRITABLE)}.", details={"field": None}
        )
    return values
