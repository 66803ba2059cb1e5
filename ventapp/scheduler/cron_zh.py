"""Chinese descriptions of the common crontab forms, in Chinese word order (date first, then time).

cron-descriptor's Chinese follows its English sentence: ``0 0 1 1 *`` read "在 00:00，每月的 1 号，
仅在 1月" (a yearly date as a monthly one), and ``0 8 1-7 * 1`` "在每月的 1 和 7 号之间，或星期一"
(crontab fires when the day of the month *or* the weekday matches). The forms people write most —
fixed times on days, weekdays and months given as numbers, ranges or lists — are worded here:
"每年1月1日 00:00", "每月1日至7日或每星期一 08:00". Anything else (steps, ``L``, names, minute or hour
ranges) returns None, and :func:`ventapp.scheduler.cron.describe` uses cron-descriptor.
"""

from __future__ import annotations

import re

_WEEKDAYS = ("星期日", "星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")
"""crontab weekday numbers 0–7 (0 and 7 are both Sunday)."""
_ORDINALS = ("", "第一个", "第二个", "第三个", "第四个", "第五个")
_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")
_NTH = re.compile(r"^([0-7])#([1-5])$")
_MAX_TIMES = 6
"""More fire times a day than this read better as cron-descriptor's "every … between …"."""


def _listed(words: list[str]) -> str:
    """``a``, ``a和b``, ``a、b和c``."""
    return words[0] if len(words) == 1 else "、".join(words[:-1]) + "和" + words[-1]


def _field(field: str, word: object) -> str | None:
    """A day, month or weekday field as Chinese: numbers, ranges ``a-b`` (至) and lists of them."""
    parts: list[str] = []
    for item in field.split(","):
        match = _ITEM.match(item)
        if match is None:
            return None
        low, high = match.group(1), match.group(2)
        name = word if callable(word) else (lambda number: f"{int(number)}{word}")
        parts.append(name(low) if high is None else f"{name(low)}至{name(high)}")
    return _listed(list(dict.fromkeys(parts)))


def _weekday(number: str) -> str:
    return _WEEKDAYS[int(number)]


def _times(minute: str, hour: str) -> str | None:
    """``08:00``, ``00:00 和 12:00``: every listed hour at every listed minute (numbers only)."""
    if not re.fullmatch(r"\d+(,\d+)*", minute) or not re.fullmatch(r"\d+(,\d+)*", hour):
        return None
    times = sorted({(int(h), int(m)) for h in hour.split(",") for m in minute.split(",")})
    if len(times) > _MAX_TIMES:
        return None
    return " 和 ".join(f"{h:02d}:{m:02d}" for h, m in times)


def describe_zh(expression: str) -> str | None:
    """The Chinese sentence for a common five-field expression, or None for cron-descriptor to word.

    Args:
        expression: A valid five-field crontab expression (0 and 7 = Sunday).

    Returns:
        E.g. ``"每天 08:00"``, ``"每星期一至星期五 08:00"``, ``"每年1月1日 00:00"``,
        ``"每月1日至7日或每星期一 08:00"``; None when the form is not one of those worded here.
    """
    fields = expression.split()
    if len(fields) != 5:
        return None
    minute, hour, day, month, weekday = fields
    times = _times(minute, hour)
    if times is None:
        return None
    days = None if day == "*" else _field(day, "日")
    months = None if month == "*" else _field(month, "月")
    nth = _NTH.match(weekday)
    if nth is not None:
        weekdays = f"{_ORDINALS[int(nth.group(2))]}{_weekday(nth.group(1))}"
    else:
        weekdays = None if weekday == "*" else _field(weekday, _weekday)
    if (
        (day != "*" and days is None)
        or (month != "*" and months is None)
        or (weekday != "*" and weekdays is None)
    ):
        return None
    if nth is not None:  # "the second Monday" is a day of the month
        weekdays_each = f"每月{weekdays}" if months is None else weekdays
    else:
        weekdays_each = f"每{weekdays}" if weekdays else None
    if months is None:
        days_each = f"每月{days}" if days else None
    else:
        days_each = days
    # crontab: with both a day of the month and a weekday, either one fires.
    date = "或".join(part for part in (days_each, weekdays_each) if part) or "每天"
    if months is not None:
        single = _ITEM.match(month) is not None and "-" not in month
        if date == "每天":
            date = f"每年{months}的每天"
        elif single and days_each and not weekdays_each:
            date = f"每年{months}{days_each}"
        else:
            date = f"每年{months}的{date}"
    return f"{date} {times}"
