"""How a setting's text becomes a number or a flag: the one parser of every numeric key.

Kept apart from :mod:`ventapp.config` (which calls it for its own keys, and through
:mod:`ventapp.config_auth` and :mod:`ventapp.mcp_config` for theirs) so that every key accepts
the same spellings and refuses the same ones. ``float()`` reads ``nan``, ``inf``, ``-inf`` and
``1e309`` (= inf) without complaint, and ``nan`` passes every ``<= 0`` check (each comparison
with it is false): try19's ``RUN_TIMEOUT_S=nan`` started, then every run failed in
``loop.call_later`` and kept its run slot. So only finite numbers are numbers here, and a number
of seconds (a key ending in ``_S``) is at most :data:`MAX_SECONDS`: ``now + timedelta(seconds=1e12)``
is past the year 9999 (a login or a de-duplicated chat would fail with OverflowError).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

MAX_SECONDS = 100 * 365 * 24 * 3600
"""Most seconds any ``*_S`` key takes (100 years: far beyond any use, well inside ``datetime``)."""

MAX_INT = 2**63 - 1
"""Most any whole-number key takes: the largest integer the databases store (``BIGINT``)."""


def as_int(values: Mapping[str, str], key: str, minimum: int = 0) -> int:
    """``values[key]`` as a whole number of at least ``minimum``.

    ``int()`` already refuses ``nan``, ``inf`` and ``1e309`` (they are not whole-number text).

    Raises:
        ValueError: Not a whole number, below ``minimum``, or above :data:`MAX_INT` (above
            :data:`MAX_SECONDS` for a key ending in ``_S``); the message names ``key`` and the text.
    """
    raw = values[key]
    try:
        number = int(raw)
    except ValueError:
        raise ValueError(f"{key} must be a whole number, got {raw!r}") from None
    if number < minimum:
        raise ValueError(f"{key} must be at least {minimum}, got {number}")
    _at_most(key, number, raw, is_seconds=key.endswith("_S"))
    return number


def _at_most(key: str, number: float, raw: str, is_seconds: bool) -> None:
    if is_seconds and number > MAX_SECONDS:
        raise ValueError(f"{key} must be at most {MAX_SECONDS} seconds (100 years), got {raw!r}")
    if number > MAX_INT:
        raise ValueError(f"{key} must be at most {MAX_INT}, got {raw!r}")


def as_float(values: Mapping[str, str], key: str, meaning: str = "a number") -> float:
    """``values[key]`` as a finite number.

    Args:
        values: Key -> raw text (defaults already filled in).
        key: The setting's name.
        meaning: What the error says the key must be (``"a positive number of seconds"``).

    Raises:
        ValueError: Not a number, or ``nan``/``inf``/``-inf``/``1e309``; the message is
            ``"{key} must be {meaning}, got '{text}'"``.
    """
    raw = values[key]
    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise ValueError(f"{key} must be {meaning}, got {raw!r}")
    return number


def as_seconds(values: Mapping[str, str], key: str, zero_means_off: bool = False) -> float:
    """``values[key]`` as a finite number of seconds, above 0 (or 0 itself when ``zero_means_off``).

    Raises:
        ValueError: Not a finite number, negative, 0 when 0 is not allowed (the message is
            ``"{key} must be a positive number of seconds, got '{text}'"``, or ``0 (off) or …``),
            or above :data:`MAX_SECONDS`.
    """
    meaning = "0 (off) or a positive number of seconds" if zero_means_off else "a positive number of seconds"
    seconds = as_float(values, key, meaning)
    if seconds < 0 or (seconds == 0 and not zero_means_off):
        raise ValueError(f"{key} must be {meaning}, got {values[key]!r}")
    _at_most(key, seconds, values[key], is_seconds=True)
    return seconds


def as_flag(values: Mapping[str, str], key: str) -> bool:
    """``values[key]`` as a switch: ``1``/``true``/``yes`` on; ``0``/``false``/``no``/empty off.

    Raises:
        ValueError: Any other text; the message names ``key``.
    """
    flag = values[key].lower()
    if flag not in ("0", "1", "true", "false", "yes", "no", ""):
        raise ValueError(f"{key} must be 0 or 1, got {values[key]!r}")
    return flag in ("1", "true", "yes")
