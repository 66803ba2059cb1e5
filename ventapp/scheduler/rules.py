"""What a schedule may hold, and the refusals the schedule routes answer with.

Refusals are :class:`ScheduleRejected`, a :class:`~ventapp.agent.pipeline.ChatRejected`,
so both the API (``{detail, message, code}`` with the status) and the UI show them the way
they show any other refused request. Each refusal of ours carries its catalogue id
(``schedules.error.*``, or its :class:`CronInvalid`): ``message`` is that message in English (the
run records keep it), and both the API (in the request's ``Accept-Language``) and the schedules
page (in its own language) word it with :func:`refusal_text`.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ventapp.agent.pipeline import MAX_MESSAGE_CHARS, ChatRejected
from ventapp.billing.guard import raisable_quota_words
from ventapp.db.schedule_models import SCHEDULE_MODES
from ventapp.i18n import LANGS, formats, has_message, t
from ventapp.scheduler.cron import parse_cron
from ventapp.scheduler.cron_problems import CronInvalid, cron_message
from ventapp.text_rules import holds_nul, invisible_character

MAX_NAME_CHARS = 200
MAX_CRON_CHARS = 120
WRITABLE = ("name", "prompt", "cron", "mode", "enabled", "lang")
"""Fields a client may set (POST needs name, prompt and cron; PUT takes any subset).

``lang`` is the language the schedule's runs answer in and word their figures in: exactly one of
:data:`~ventapp.i18n.LANGS` (``"zh-CN"``, ``"en"``).
"""
OWNER_FIELD = "user_name"
"""The one other field a body may carry: the owner, which the routes read (never stored as sent)."""
BEIJING = "Asia/Shanghai"
SCHEDULE_KEYS = "schedules."
"""The catalogue ids of this module's refusals (a pipeline refusal passed on keeps its ``refusal.*`` id)."""
SHOWN_NAME_CHARS = 60
"""Most characters of an unknown field's name a refusal repeats."""


class ScheduleRejected(ChatRejected):
    """A schedule request refused before anything changed (400, 404, 409, 422, 429, 503).

    Attributes:
        key: The catalogue id that words the refusal (``schedules.error.*``; a refusal passed on
            from the pipeline keeps its own ``refusal.*`` id, or ``""``); ``message`` is it in
            English, the API's ``detail``.
        params: The values ``key``'s sentence names (e.g. ``limit``).
        cron_problem: For ``bad_cron``, the refusal itself (worded with
            :func:`~ventapp.scheduler.cron_problems.cron_message`); None otherwise.
    """

    cron_problem: CronInvalid | None = None

    def worded(self, lang: str) -> str:
        """The sentence in ``lang``: ours by :func:`refusal_text`, one passed on from the pipeline (a
        "run now" refused for the quota) by its own catalogue id; ``message`` stays the English one
        (the API's ``detail``)."""
        if self.cron_problem is not None or self.key.startswith(SCHEDULE_KEYS):
            return refusal_text(self, lang)
        return super().worded(lang)


def refusal(
    status: int,
    code: str,
    key: str,
    *,
    field: str | None = None,
    retry_after: int | None = None,
    **params: object,
) -> ScheduleRejected:
    """A refusal worded by catalogue id ``key`` (``message``: English; ``field``: the body field at fault).

    Args:
        status: HTTP status (400, 404, 409, 422, 503).
        code: The API's ``code`` (``bad_request``, ``not_found``, ``schedule_busy``, ``busy``).
        key: A ``schedules.error.*`` id, the same in both catalogues (or a pipeline ``refusal.*`` one,
            e.g. ``refusal.shutting_down``).
        field: The JSON field refused (422 adds ``field`` and ``errors[].loc``), or None.
        retry_after: Seconds after which the same request may succeed (503 while starting), or None.
        **params: The values the message names.
    """
    details = {"field": field} if code == "bad_request" and status == 422 else None
    message = t(key, "en", **_worded(params, "en"))
    return ScheduleRejected(
        status, code, message, retry_after=retry_after, details=details, key=key, params=params
    )


def _worded(params: dict[str, object], lang: str) -> dict[str, object]:
    """Numbers written per language (``100,000``); anything else as is."""
    return {name: formats.number(v, lang) if isinstance(v, int) else v for name, v in params.items()}


def refusal_text(refused: ChatRejected, lang: str) -> str:
    """The sentence a person sees for a refused schedule request, in ``lang``.

    Our refusals by their catalogue id (a bad cron by its cause); the pipeline's (a "run now"
    refused for quota, a full server, an unpriced model) by ``error.<code>``; a code with no
    sentence by the generic ``schedules.error.refused`` naming it. Never the English ``message``.
    """
    if isinstance(refused, ScheduleRejected):
        if refused.cron_problem is not None:
            return cron_message(refused.cron_problem, lang)
        if refused.key.startswith(SCHEDULE_KEYS):
            return t(refused.key, lang, **_worded(refused.params, lang))
    if refused.code == "quota" and (raisable := raisable_quota_words(refused.message, lang)):
        return raisable[0]  # the user lowered their own limit: the usage page raises it again
    if has_message(f"error.{refused.code}"):
        return t(f"error.{refused.code}", lang)
    return t("schedules.error.refused", lang, code=refused.code)


def not_found() -> ScheduleRejected:
    """The one answer for a schedule that does not exist or is another user's."""
    return refusal(404, "not_found", "schedules.error.not_found")


def bad_cron(problem: CronInvalid) -> ScheduleRejected:
    """422 ``bad_cron``: one English sentence for the cause, plus ``field``, ``cause`` and ``reason``.

    ``cause`` is the code the UI words in the page's language (see
    :mod:`ventapp.scheduler.cron_problems`); ``reason`` is the parser's detail, for logs;
    ``field`` names the part of the expression at fault (``minute`` … or ``cron``), while
    ``errors[].loc`` points at the body's ``cron``, the field the API takes.
    """
    message = cron_message(problem, "en")
    refused = ScheduleRejected(
        422,
        "bad_cron",
        message,
        details={
            "field": problem.field,
            "cause": problem.cause,
            "reason": problem.reason,
            "errors": [{"type": "bad_cron", "loc": ["body", "cron"], "msg": message}],
        },
    )
    refused.cron_problem = problem
    return refused


def _text(fields: dict[str, Any], key: str, limit: int) -> str:
    value = fields[key]
    if not isinstance(value, str) or not value.strip():
        raise refusal(422, "bad_request", f"schedules.error.{key}_empty", field=key)
    if len(value) > limit:
        raise refusal(422, "bad_request", f"schedules.error.{key}_too_long", field=key, limit=limit)
    if key == "name":
        if invisible_character(value.strip()) is not None:  # a one-line name: no bidi/zero-width/control
            raise refusal(422, "bad_request", "schedules.error.name_invisible", field=key)
        return value.strip()
    if holds_nul(value):  # the prompt becomes each run's message: PostgreSQL cannot store NUL
        raise refusal(422, "bad_request", "schedules.error.prompt_nul", field=key)
    return value


def zone_name(tz: tzinfo) -> str:
    """The IANA name of ``SCHEDULER_TZ`` (``Asia/Shanghai``), as a schedule's ``timezone`` shows it."""
    return str(getattr(tz, "key", None) or tz)


def timezone_refused(sent: object, cron: object, tz: tzinfo, now: datetime | None = None) -> ScheduleRejected:
    """422 naming ``timezone``: schedules run in ``SCHEDULER_TZ``; write the cron in it.

    When ``sent`` is a time zone we know, the sentence converts an example from it: the time of a
    daily ``cron`` sent with it (``"0 8 * * *"``: 08:00), else 08:00, as it is today in ``sent`` (a
    zone with daylight saving time moves against ours), e.g. "today 08:00 in UTC is 16:00 in
    Beijing (0 16 * * *)". Anything else (not a zone name) gets the sentence without an example.

    Args:
        sent: The body's ``timezone`` (any JSON value).
        cron: The body's ``cron``, if any (any JSON value).
        tz: ``SCHEDULER_TZ``.
        now: The moment "today" means (default: now).

    Returns:
        The refusal to raise (``field: "timezone"``).
    """
    zone = zone_name(tz)
    beijing = zone == BEIJING
    try:
        theirs = ZoneInfo(sent) if isinstance(sent, str) and sent else None
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name too long for a file path
        theirs = None
    if theirs is None:
        key = "schedules.error.timezone_beijing" if beijing else "schedules.error.timezone"
        return refusal(422, "bad_request", key, field="timezone", zone=zone)
    hour, minute = 8, 0
    parts = cron.split() if isinstance(cron, str) else []
    if len(parts) == 5 and parts[2:] == ["*", "*", "*"] and parts[0].isdigit() and parts[1].isdigit():
        if int(parts[0]) < 60 and int(parts[1]) < 24:
            minute, hour = int(parts[0]), int(parts[1])
    there = datetime.combine((now or datetime.now(UTC)).astimezone(theirs).date(), time(hour, minute), theirs)
    here = there.astimezone(tz)
    key = "schedules.error.timezone_beijing_example" if beijing else "schedules.error.timezone_example"
    return refusal(
        422,
        "bad_request",
        key,
        field="timezone",
        zone=zone,
        sent=str(sent),
        time=f"{hour:02d}:{minute:02d}",
        local=f"{here.hour:02d}:{here.minute:02d}",
        cron=f"{here.minute} {here.hour} * * *",
    )


def _check_known(fields: dict[str, Any], tz: tzinfo) -> None:
    """422 for a field a schedule does not have; ``timezone`` gets its own sentence.

    Ignoring them was worse than refusing: ``"timezone": "UTC"`` was accepted and the runs came
    8 h off. A ``timezone`` naming the zone schedules run in is only a confirmation and passes.
    """
    zone = zone_name(tz)
    if "timezone" in fields and fields["timezone"] != zone:
        raise timezone_refused(fields["timezone"], fields.get("cron"), tz)
    for name in fields:
        if name not in WRITABLE and name not in (OWNER_FIELD, "timezone"):
            shown = name if len(name) <= SHOWN_NAME_CHARS else name[: SHOWN_NAME_CHARS - 1] + "…"
            raise refusal(
                422,
                "bad_request",
                "schedules.error.unknown_field",
                field=name,
                name=shown,
                fields=", ".join(WRITABLE),
            )


def validated(fields: dict[str, Any], tz: tzinfo, *, partial: bool) -> dict[str, Any]:
    """The writable fields (:data:`WRITABLE`) of a create (``partial=False``) or update request, checked.

    Args:
        fields: The request's JSON object: :data:`WRITABLE`, the owner's ``user_name`` and a
            ``timezone`` equal to ``tz``'s name; any other field is refused.
        tz: ``SCHEDULER_TZ`` (the never-firing check needs a zone).
        partial: True for an update (any subset); False requires name, prompt and cron.

    Returns:
        Column -> value for the fields present (the cron expression with single spaces).

    Raises:
        ScheduleRejected: 422 ``bad_request`` naming the field (an unknown one, or ``timezone``
            naming another zone, too), or ``bad_cron``.
    """
    _check_known(fields, tz)
    if not partial:
        missing = [key for key in ("name", "prompt", "cron") if key not in fields]
        if missing:
            raise refusal(
                422, "bad_request", "schedules.error.missing", field=missing[0], fields=", ".join(missing)
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
            raise refusal(422, "bad_request", "schedules.error.mode", field="mode")
        values["mode"] = fields["mode"]
    if "enabled" in fields:
        if not isinstance(fields["enabled"], bool):
            raise refusal(422, "bad_request", "schedules.error.enabled", field="enabled")
        values["enabled"] = fields["enabled"]
    if "lang" in fields:
        if fields["lang"] not in LANGS:
            raise refusal(422, "bad_request", "schedules.error.lang", field="lang", langs=", ".join(LANGS))
        values["lang"] = fields["lang"]
    if partial and not values:
        raise refusal(422, "bad_request", "schedules.error.nothing", fields=", ".join(WRITABLE))
    return values
