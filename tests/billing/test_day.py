"""The usage day is the Asia/Shanghai calendar day, whatever the server's time zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from ventapp.billing.day import next_reset, seconds_until_reset, usage_day


def test_day_turns_at_shanghai_midnight_not_utc_midnight() -> None:
    assert usage_day(datetime(2026, 1, 1, 15, 59, 59)) == date(2026, 1, 1)  # naive = UTC
    assert usage_day(datetime(2026, 1, 1, 16, 0, 0)) == date(2026, 1, 2)
    assert usage_day(datetime(2026, 1, 1, 23, 0, tzinfo=UTC)) == date(2026, 1, 2)
    new_york = timezone(timedelta(hours=-5))
    assert usage_day(datetime(2026, 1, 1, 11, 0, tzinfo=new_york)) == date(2026, 1, 2)  # 00:00 Shanghai


def test_reset_is_next_shanghai_midnight() -> None:
    at = datetime(2026, 1, 1, 15, 0, 0)  # 23:00 in Shanghai
    assert next_reset(at).astimezone(UTC) == datetime(2026, 1, 1, 16, 0, tzinfo=UTC)
    assert seconds_until_reset(at) == 3600
    assert seconds_until_reset(datetime(2026, 1, 1, 16, 0, 0)) == 24 * 3600
