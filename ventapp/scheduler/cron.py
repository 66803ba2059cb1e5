"""Five-field crontab expressions: validation, APScheduler triggers, fire times, descriptions.

Two differences between crontab(5) and APScheduler 3's ``CronTrigger`` are bridged here,
so an expression means what a person who writes crontabs expects:

* day-of-week numbers: crontab counts 0 (and 7) = Sunday, APScheduler 3 counts 0 = Monday
  (its ``from_crontab`` documents the "historical mistake"). ``1-5`` must be Monday to
  Friday, so the field is rewritten with day names before APScheduler sees it;
* a restricted day-of-month *and* day-of-week: crontab fires when *either* matches,
  APScheduler only when both do. Such an expression becomes an ``OrTrigger`` of the two.

Every time is computed in the zone the caller passes (``SCHEDULER_TZ``), never the host's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, tzinfo
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger
from cron_descriptor import ExpressionDescriptor, FormatException, Options

from ventapp.scheduler.cron_problems import CronInvalid, check_numbers, check_step, out_of_range
from ventapp.scheduler.cron_zh import describe_zh

FIELDS = ("minute", "hour", "day", "month", "day_of_week")
"""The five fields, in crontab order, named as in APScheduler (and in 422 messages)."""
_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_STEP = timedelta(seconds=1)
_SCAN_LIMIT = 10_000

_ZH_NAMES = {
    **dict(
        zip(
            ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
            ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
            strict=True,
        )
    ),
    **{
        month: f"{number}月"
        for number, month in enumerate(
            (
                "January",
                "February",
                "March",
                "April",
                "May",
                "June",
                "July",
                "August",
                "September",
                "October",
                "November",
                "December",
            ),
            start=1,
        )
    },
}
# Not ``\b``: a Chinese character is a word character too, so "或Monday" has no boundary (a tester).
_ZH_NAME_RE = re.compile(r"(?<![A-Za-z])(" + "|".join(_ZH_NAMES) + r")(?![A-Za-z])")


def _weekday(token: str) -> int:
    lowered = token.lower()
    if lowered in _DAY_NAMES:
        return _DAY_NAMES.index(lowered)
    if token.isdigit() and int(token) > 7:
        raise out_of_range("day_of_week", int(token))
    if not token.isdigit():
        raise CronInvalid(
            "day_of_week",
            f"{token!r} is not a day of the week (0–7 or sun–sat; 0 and 7 are Sunday)",
            value=token,
        )
    return int(token) % 7


def _weekdays(field: str) -> str:
    """A crontab day-of-week field rewritten with day names (APScheduler numbers differ)."""
    if field == "*":
        return field
    days: set[int] = set()
    for part in field.split(","):
        span, slash, step_text = part.partition("/")
        if slash:
            check_step("day_of_week", part, step_text)
        step = int(step_text) if step_text else 1
        if span == "*":
            first, last = 0, 6
        elif "-" in span:
            low, _, high = span.partition("-")
            first, last = _weekday(low), _weekday(high)
            if high.strip() == "7":
                last = 7  # "5-7" is Friday to Sunday
            if last < first:
                raise CronInvalid(
                    "day_of_week", f"the range {span!r} runs backwards", "backwards_range", value=span
                )
        else:
            first = last = _weekday(span)
        days.update(day % 7 for day in range(first, last + 1, step))
    return ",".join(_DAY_NAMES[day] for day in sorted(days))


def parse_cron(expression: str, tz: tzinfo) -> BaseTrigger:
    """The trigger of a five-field crontab expression, evaluated in ``tz``.

    Args:
        expression: e.g. ``"0 8 * * 1-5"`` (minute hour day-of-month month day-of-week).
        tz: The zone the fields are read in (``SCHEDULER_TZ``).

    Returns:
        A ``CronTrigger``, or an ``OrTrigger`` when day-of-month and day-of-week are both
        restricted (crontab fires when either matches).

    Raises:
        CronInvalid: With a ``cause`` (see :mod:`~ventapp.scheduler.cron_problems`): wrong number
            of fields (field ``cron``), a bad step, number or range in a field, a field
            APScheduler cannot read (``unrecognized``), or an expression that never fires.
    """
    parts = expression.split()
    if len(parts) != 5:
        raise CronInvalid(
            "cron",
            f"expected 5 fields (minute hour day month day_of_week), got {len(parts)}",
            "field_count",
            count=len(parts),
        )
    values = dict(zip(FIELDS, parts, strict=True))
    for field, value in values.items():
        if field == "day_of_week":
            value = values[field] = _weekdays(value)
        else:
            check_numbers(field, value)
        try:
            CronTrigger(**{field: value}, timezone=tz)
        except ValueError as problem:
            raise CronInvalid(field, str(problem), value=parts[FIELDS.index(field)]) from None
    trigger: BaseTrigger
    if values["day"] != "*" and values["day_of_week"] != "*":
        trigger = OrTrigger(
            [
                CronTrigger(**{**values, "day_of_week": "*"}, timezone=tz),
                CronTrigger(**{**values, "day": "*"}, timezone=tz),
            ]
        )
    else:
        trigger = CronTrigger(**values, timezone=tz)
    if trigger.get_next_fire_time(None, datetime.now(tz)) is None:
        # The reason and the sentence name the same fields, as typed (never an unrelated example).
        day, month = parts[2], parts[3]
        raise CronInvalid(
            "cron",
            f"this expression never fires: no month in {month!r} has a day {day!r}",
            "never_fires",
            day=day,
            month=month,
        )
    return trigger


def fire_times(trigger: BaseTrigger, after: datetime) -> Iterator[datetime]:
    """Fire times at or after ``after`` (aware), in order; ends when the trigger does."""
    fire = trigger.get_next_fire_time(None, after)
    while fire is not None:
        yield fire
        fire = trigger.get_next_fire_time(fire, fire + _STEP)


def next_fire_times(trigger: BaseTrigger, after: datetime, count: int = 5) -> list[datetime]:
    """The next ``count`` fire times at or after ``after`` (aware datetimes in the trigger's zone)."""
    times = []
    for fire in fire_times(trigger, after):
        times.append(fire)
        if len(times) == count:
            break
    return times


def latest_fire_between(trigger: BaseTrigger, after: datetime, until: datetime) -> datetime | None:
    """The newest fire time in ``(after, until]``, or None (both aware).

    A long gap with a frequent expression (a service down for a year, every minute) is
    not walked tick by tick: past a scan limit the search restarts one day before ``until``.
    """
    latest = None
    start = after + _STEP
    for steps, fire in enumerate(fire_times(trigger, start)):
        if fire > until:
            return latest
        latest = fire
        if steps > _SCAN_LIMIT:
            return latest_fire_between(trigger, max(after, until - timedelta(days=1)), until)
    return latest


def describe(expression: str, lang: str = "en") -> str:
    """A sentence for people, e.g. ``"At 08:00, Monday through Friday"`` / ``"每星期一至星期五 08:00"``.

    Args:
        expression: A valid five-field expression (crontab day numbers, 0 = Sunday).
        lang: ``"zh-CN"`` or ``"en"`` (anything else reads as English).

    Returns:
        The description, or ``""`` when cron-descriptor cannot read the expression.
    """
    options: Any = Options()
    options.locale_code = "zh_CN" if lang.lower().startswith("zh") else "en_US"
    if options.locale_code == "zh_CN" and (worded := describe_zh(expression)) is not None:
        return worded  # the common forms in Chinese word order; cron-descriptor words the rest
    options.use_24hour_time_format = True
    try:
        text = ExpressionDescriptor(_one_sunday(expression), options).get_description()
    except (FormatException, ValueError, IndexError, KeyError):
        return ""
    if options.locale_code == "zh_CN":
        # Day and month names come from the process's C locale (English) even in Chinese text.
        text = _zh_punctuation(_ZH_NAME_RE.sub(lambda match: _ZH_NAMES[match.group(1)], text))
        text = _zh_word_order(text, expression)
    return text


def _one_sunday(expression: str) -> str:
    """``expression`` with a day-of-week list naming Sunday once: crontab reads both 0 and 7 as
    Sunday, and cron-descriptor said "only on Sunday and Sunday" for ``0,7``."""
    fields = expression.split()
    if len(fields) != 5 or "," not in fields[4]:
        return expression
    days = ["0" if day == "7" else day for day in fields[4].split(",")]
    return " ".join([*fields[:4], ",".join(dict.fromkeys(days))])


_ZH_NTH_WEEKDAY = re.compile(r"在第(\S)个(星期\S) ?每月")
_ZH_EVERY_N_MONTHS = re.compile(r"每 (\d+) 月")
_ZH_AT_TIMES = re.compile(r"在 (\d\d:\d\d(?: 和 \d\d:\d\d)*)$")


def _zh_word_order(text: str, expression: str) -> str:
    """cron-descriptor's Chinese follows the English word order: "在第二个星期一 每月" for ``1#2``,
    "每 2 月", and "在 08:00" for a daily time, which does not say it is every day (a tester).
    """
    text = _ZH_NTH_WEEKDAY.sub(r"每月第\1个\2", text)
    text = _ZH_EVERY_N_MONTHS.sub(r"每 \1 个月", text)
    if expression.split()[2:] == ["*", "*", "*"]:
        text = _ZH_AT_TIMES.sub(r"每天 \1", text)
    return text


_ZH_LISTED = re.compile(r"(星期[一二三四五六日]|\d+月), (?=星期|\d+月)")
_ZH_BETWEEN_HAN = re.compile(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])")


def _zh_punctuation(text: str) -> str:
    """cron-descriptor's Chinese keeps English punctuation: "仅在 星期一, 星期三, 和 星期五".

    Listed days and months take the enumeration comma 、, the last one 和 alone, clauses the
    full-width comma, and no space stands between two Chinese characters ("星期一到星期五").
    """
    text = _ZH_LISTED.sub(r"\1、", text).replace("、和 ", "和").replace(", 和 ", "和")
    return _ZH_BETWEEN_HAN.sub("", text.replace(", ", "，"))
