"""Numbers, dates, durations and sizes written the way each language writes them (Babel's CLDR data).

Every function takes the UI language (``"zh-CN"`` | ``"en"``, see :func:`ventapp.i18n.resolve_lang`)
and returns text for people; none of them raises for ordinary input. Times are shown in the zone
the caller passes (the UI uses Asia/Shanghai, the usage day's zone).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, date, datetime, tzinfo

from babel import Locale
from babel.dates import format_skeleton
from babel.numbers import format_compact_decimal, format_decimal
from babel.units import format_unit

from ventapp.i18n import resolve_lang

_LOCALES = {"zh-CN": "zh_Hans_CN", "en": "en"}


def babel_locale(lang: str) -> str:
    """The Babel locale id of a UI language (``zh_Hans_CN`` or ``en``)."""
    return _LOCALES[resolve_lang(lang)]


def number(value: int | float, lang: str, *, digits: int | None = None) -> str:
    """``12345`` → ``"12,345"``; ``digits`` fixes the decimals (``1.5`` with 2 → ``"1.50"``)."""
    pattern = None if digits is None else "#,##0." + "0" * digits if digits else "#,##0"
    return format_decimal(value, format=pattern, locale=babel_locale(lang))


COST_SIGNIFICANT = 3
"""Every cost the UI shows has this many significant digits (at least 2 decimals, at most the
micro-unit's 6): ``¥0.000710``, ``¥0.000676``, ``¥0.0123``, ``¥1.50``, ``¥1,234.57``."""
_CURRENCY_SYMBOLS = {"CNY": "¥", "USD": "$"}


def money(micros: int, currency: str, lang: str) -> str:
    """A cost for people by one rule (:data:`COST_SIGNIFICANT`); the ledger and API keep exact micros.

    Args:
        micros: Micro-units of ``currency`` (1 CNY = 1,000,000).
        currency: An ISO code; CNY and USD get their symbol, others lead with the code.
        lang: The UI language (digit grouping).
    """
    value = micros / 1_000_000
    digits = 2
    for _ in range(2):  # again when rounding reached the next power of ten (0.000999999 → 0.00100)
        magnitude = math.floor(math.log10(abs(value))) if value else 0
        digits = min(6, max(2, COST_SIGNIFICANT - 1 - magnitude))
        value = round(value, digits)
    symbol = _CURRENCY_SYMBOLS.get(currency, currency + " ")
    return symbol + number(value, lang, digits=digits)


def measure(value: int | float, lang: str) -> str:
    """An engineering quantity to about three significant figures, without trailing zeros.

    ``1234.5`` → ``"1,235"``, ``45.678`` → ``"45.7"``, ``12.0`` → ``"12"``, ``0.012345`` → ``"0.0123"``.
    """
    if not value or not math.isfinite(value):
        return str(value)
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    pattern = "#,##0." + "#" * decimals if decimals else "#,##0"
    return format_decimal(round(value, decimals), format=pattern, locale=babel_locale(lang))


def plural_form(count: int, lang: str) -> str:
    """The CLDR plural category of ``count`` in ``lang``: ``"one"`` or ``"other"`` (Chinese: always ``"other"``)."""
    return str(Locale.parse(babel_locale(lang)).plural_form(abs(count)))


def compact(value: int, lang: str) -> str:
    """Short counts for gauges: ``128000`` → ``"128K"`` (en) / ``"12.8万"`` (zh-CN); ``1039`` →
    ``"1K"`` / ``"1,039"``; under 1,000 as is."""
    if abs(value) < 1000:
        return str(value)
    short = format_compact_decimal(value, format_type="short", fraction_digits=1, locale=babel_locale(lang))
    # Chinese has no short form below 万 (10,000): CLDR gives the bare digits, "1039"; group them.
    return number(value, lang) if short.lstrip("-").isdigit() else short


def duration_s(milliseconds: int, lang: str) -> str:
    """A run's wall time: ``2400`` → ``"2.4 sec"`` / ``"2.4秒"``."""
    return format_unit(
        round(milliseconds / 1000, 1), "duration-second", length="short", locale=babel_locale(lang)
    )


def wait(seconds: int, lang: str) -> str:
    """How long to wait, rounded up to a unit people read: ``900`` → ``"15分钟"`` / ``"15 minutes"``
    (under a minute in seconds, under two hours in minutes, else in hours)."""
    if seconds < 60:
        amount, unit = max(0, seconds), "duration-second"
    elif seconds < 2 * 3600:
        amount, unit = math.ceil(seconds / 60), "duration-minute"
    else:
        amount, unit = math.ceil(seconds / 3600), "duration-hour"
    return format_unit(amount, unit, length="long", locale=babel_locale(lang))


def names(items: Iterable[str], lang: str) -> str:
    """Names listed in running text: ``"a、b、c"`` in Chinese (the enumeration comma), ``"a, b, c"`` in
    English. Names (skills, tools, models) are listed as they are, without a final "and"/"和"."""
    return ("、" if resolve_lang(lang) == "zh-CN" else ", ").join(items)


class FileSize(int):
    """A size in bytes that a sentence names as :func:`file_size` words it in its language
    ("20 MB"), e.g. a refusal's ``params`` (:meth:`ventapp.refusal.Refusal.formatted`)."""


_SIZES = (("digital-megabyte", 1024 * 1024), ("digital-kilobyte", 1024))


def file_size(size_bytes: int, lang: str) -> str:
    """A file's size in KB or MB (binary multiples, one decimal), never raw bytes.

    ``73`` → ``"0.1 kB"`` (a non-empty file never reads as 0, nor as a whole kB: found by trying
    it); ``20480`` → ``"20 kB"``; ``3_500_000`` → ``"3.3 MB"``; ``0`` → ``"0 kB"``.
    """
    for unit, scale in _SIZES:
        if size_bytes >= scale:
            return format_unit(round(size_bytes / scale, 1), unit, length="short", locale=babel_locale(lang))
    shown = max(0.1, round(size_bytes / 1024, 1)) if size_bytes else 0
    return format_unit(shown, "digital-kilobyte", length="short", locale=babel_locale(lang))


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def date_time(moment: datetime | None, lang: str, zone: tzinfo) -> str:
    """Date and time to the minute in ``zone``: ``"2026/12/1 08:05"`` / ``"Dec 1, 2026, 08:05"``.

    English names the month: "12/1/2026" reads as 12 January to most of the world, and the rest of
    the English UI writes days as :func:`long_date` does.

    Args:
        moment: Aware, or naive UTC (how the database stores times); None gives ``""``.
        lang: The UI language.
        zone: Where the reader is (e.g. ``ZoneInfo("Asia/Shanghai")``).
    """
    if moment is None:
        return ""
    local = _aware(moment).astimezone(zone)
    loc = babel_locale(lang)
    pattern = Locale.parse(loc).datetime_formats["short"]
    day = format_skeleton("yMd" if loc.startswith("zh") else "yMMMd", local, locale=loc)
    return pattern.format(format_skeleton("Hm", local, locale=loc), day)


def time_of_day(moment: datetime, lang: str, zone: tzinfo, *, seconds: bool = False) -> str:
    """``08:05`` (24-hour clock in both languages; ``seconds`` adds them)."""
    return format_skeleton(
        "Hms" if seconds else "Hm", _aware(moment).astimezone(zone), locale=babel_locale(lang)
    )


def short_date(day: date, lang: str) -> str:
    """Month and day for chart axes: ``"12/1"`` (both languages)."""
    return format_skeleton("Md", day, locale=babel_locale(lang))


def long_date(day: date, lang: str) -> str:
    """A day for headings: ``"2026年12月1日"`` / ``"Dec 1, 2026"``."""
    return format_skeleton("yMMMd", day, locale=babel_locale(lang))
