"""The usage day: the Asia/Shanghai calendar day (00:00–24:00 at UTC+8).

Quotas reset and daily totals roll over at midnight in Shanghai, whatever the
server's own time zone, the same clock the spec uses for schedules (spec 002,
"定时任务"). Usage is booked on the day it was *settled*; a settlement retried
from ``billing_pending`` keeps the day of its first attempt.

Database timestamps are naive UTC (``ventapp.db.models.utcnow``); these helpers
accept naive datetimes as UTC.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone, tzinfo

try:
    from zoneinfo import ZoneInfo

    USAGE_TZ: tzinfo = ZoneInfo("Asia/Shanghai")
except Exception:  # no tz database on the machine: China has had no DST since 1991
    USAGE_TZ = timezone(timedelta(hours=8), "Asia/Shanghai")

USAGE_TZ_NAME = "Asia/Shanghai"


def _aware(at: datetime | None) -> datetime:
    if at is None:
        return datetime.now(UTC)
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at


def usage_day(at: datetime | None = None) -> date:
    """The Asia/Shanghai calendar day of ``at``.

    Args:
        at: A moment; naive values are UTC. Default: now.

    Returns:
        The day usage at that moment is booked on.
    """
    return _aware(at).astimezone(USAGE_TZ).date()


def next_reset(at: datetime | None = None) -> datetime:
    """The next Asia/Shanghai midnight after ``at``, as an aware datetime (when quotas reset)."""
    local = _aware(at).astimezone(USAGE_TZ)
    tomorrow = local.date() + timedelta(days=1)
    return datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=USAGE_TZ)


def seconds_until_reset(at: datetime | None = None) -> int:
    """Whole seconds (at least 1) from ``at`` until the quota resets."""
    now = _aware(at)
    delta = next_reset(now) - now
    return max(1, int(delta.total_seconds() + 0.999))
