"""Why a cron expression cannot be used: one cause code per mistake, worded per language.

APScheduler's own errors are English fragments that do not say which rule was broken
(``*/0`` reads "Increment must be higher than 0"), so the numbers a person types are
checked here first and each problem gets a stable ``cause``:

==================  ===========================================================
``field_count``     not five fields (``count``)
``bad_step``        a step that is not a whole number above 0 (``value``)
``out_of_range``    a number outside the field's bounds (``value``, ``low``, ``high``)
``backwards_range`` a range whose start is after its end (``value``)
``unrecognized``    anything else the field cannot read (``value``)
``never_fires``     valid fields, but no date ever matches (``day``, ``month`` as typed: 31, 2)
``not_text``        the expression is not a string
``too_long``        longer than the limit (``limit``)
==================  ===========================================================

The UI and the API word a cause with :func:`cron_message` (one sentence, the
catalogues' ``cron.<cause>``); the API also sends ``cause`` and ``field``.
"""

from __future__ import annotations

import re

from ventapp.i18n import t

BOUNDS = {"minute": (0, 59), "hour": (0, 23), "day": (1, 31), "month": (1, 12), "day_of_week": (0, 7)}
"""Inclusive bounds of each numeric field (crontab's: 0 and 7 are both Sunday)."""
_NUMBER_OR_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


class CronInvalid(ValueError):
    """The expression cannot be used.

    Attributes:
        field: ``minute`` / ``hour`` / ``day`` / ``month`` / ``day_of_week``, or ``cron`` for
            the whole expression.
        reason: An English sentence for logs and the API's ``reason`` (may quote the parser).
        cause: A stable code (see the module docstring); the UI words it per language.
        params: The values the cause's sentence names (``value``, ``low``, ``high``, ``count``, ``limit``).
    """

    def __init__(self, field: str, reason: str, cause: str = "unrecognized", **params: object) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
        self.cause = cause
        self.params = params


def check_numbers(field: str, value: str) -> None:
    """Refuse bad steps, out-of-range numbers and backwards ranges in one field.

    Args:
        field: One of :data:`BOUNDS` (``day_of_week`` is checked by the caller's own parser).
        value: The field as typed, e.g. ``"*/15"`` or ``"1-5,10"``.

    Raises:
        CronInvalid: ``bad_step``, ``out_of_range`` or ``backwards_range``. Anything else
            (names, ``L``, typos) is left to APScheduler.
    """
    low, high = BOUNDS[field]
    for part in value.split(","):
        span, slash, step = part.partition("/")
        if slash:
            check_step(field, part, step)
        match = _NUMBER_OR_RANGE.match(span)
        if match is None:
            continue
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        for number in (first, last):
            if not low <= number <= high:
                raise out_of_range(field, number)
        if last < first:
            raise CronInvalid(field, f"the range {span!r} runs backwards", "backwards_range", value=span)


def check_step(field: str, part: str, step: str) -> None:
    """Raise ``bad_step`` unless ``step`` (the text after ``/`` in ``part``) is a whole number above 0."""
    if not (step.isdigit() and int(step) > 0):
        raise CronInvalid(
            field, f"the step in {part!r} must be a whole number above 0", "bad_step", value=part
        )


def out_of_range(field: str, number: int | str) -> CronInvalid:
    """``out_of_range`` for ``number`` in ``field`` (bounds from :data:`BOUNDS`)."""
    low, high = BOUNDS[field]
    return CronInvalid(
        field, f"{number} is outside {low}–{high}", "out_of_range", value=number, low=low, high=high
    )


def cron_message(problem: CronInvalid, lang: str) -> str:
    """One sentence saying what is wrong, in ``lang`` (``"zh-CN"`` or ``"en"``).

    Args:
        problem: The refusal from :func:`~ventapp.scheduler.cron.parse_cron` or the rules.
        lang: The page's language (the API uses ``"en"``).

    Returns:
        E.g. ``"分钟字段的步长须为大于 0 的整数（如 */5），“*/0”不行。"``.
    """
    name = t(f"cron.field.{problem.field}", lang)
    return t(f"cron.{problem.cause}", lang, field=name, **problem.params)
