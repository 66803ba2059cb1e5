"""Cron expressions: validation (good, bad, never firing), crontab semantics, time zones, descriptions."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from ventapp.scheduler.cron import CronInvalid, describe, latest_fire_between, next_fire_times, parse_cron

SHANGHAI = ZoneInfo("Asia/Shanghai")


@pytest.fixture
def host_in_new_york() -> Iterator[None]:
    """The host's own zone is far from Beijing: nothing may depend on it."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


@pytest.mark.parametrize(
    "expression", ["0 8 * * *", "*/15 * * * *", "30 2 1 * *", "0 9 * * 1-5", "0 0 29 2 *"]
)
def test_good_expressions_parse_and_fire(expression: str) -> None:
    trigger = parse_cron(expression, SHANGHAI)
    assert len(next_fire_times(trigger, datetime(2026, 1, 1, tzinfo=SHANGHAI), 5)) == 5


@pytest.mark.parametrize(
    ("expression", "field", "reason_part"),
    [
        ("61 * * * *", "minute", "61 is outside 0–59"),
        ("0 25 * * *", "hour", "25 is outside 0–23"),
        ("0 0 0 * *", "day", "0 is outside 1–31"),
        ("0 0 1 13 *", "month", "13 is outside 1–12"),
        ("0 0 * * 8", "day_of_week", "8 is outside 0–7"),
        ("0 0 * * x", "day_of_week", "not a day of the week"),
        ("0 0 * *", "cron", "expected 5 fields"),
        ("0 0 * * * *", "cron", "got 6"),
        ("x 0 * * *", "minute", 'Unrecognized expression "x"'),
    ],
)
def test_bad_expressions_name_the_field_and_the_reason(expression: str, field: str, reason_part: str) -> None:
    with pytest.raises(CronInvalid) as problem:
        parse_cron(expression, SHANGHAI)
    assert problem.value.field == field and reason_part in problem.value.reason


def test_an_expression_that_never_fires_is_refused() -> None:
    with pytest.raises(CronInvalid) as problem:
        parse_cron("0 0 30 2 *", SHANGHAI)
    assert problem.value.field == "cron" and "never fires" in problem.value.reason


def test_nine_in_shanghai_is_one_in_utc_whatever_the_host_zone(host_in_new_york: None) -> None:
    assert time.strftime("%Z") in ("EST", "EDT"), "the host zone really is New York here"
    trigger = parse_cron("0 9 * * *", SHANGHAI)
    fire = next_fire_times(trigger, datetime(2026, 12, 1, 2, 0, tzinfo=UTC), 1)[0]
    assert fire.astimezone(UTC) == datetime(2026, 12, 2, 1, 0, tzinfo=UTC)
    assert fire.isoformat() == "2026-12-02T09:00:00+08:00"


def test_weekday_numbers_follow_crontab_not_apscheduler() -> None:
    """crontab 1-5 is Monday to Friday (APScheduler 3 alone would read Tuesday to Saturday)."""
    trigger = parse_cron("0 8 * * 1-5", SHANGHAI)
    fires = next_fire_times(trigger, datetime(2026, 12, 5, tzinfo=SHANGHAI), 5)  # a Saturday
    assert [f.strftime("%a") for f in fires] == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    sundays = next_fire_times(parse_cron("0 8 * * 0", SHANGHAI), datetime(2026, 12, 1, tzinfo=SHANGHAI), 2)
    assert {f.strftime("%a") for f in sundays} == {"Sun"}
    assert (
        next_fire_times(parse_cron("0 8 * * 7", SHANGHAI), datetime(2026, 12, 1, tzinfo=SHANGHAI), 1)
        == sundays[:1]
    )
    weekend = next_fire_times(parse_cron("0 8 * * 5-7", SHANGHAI), datetime(2026, 12, 1, tzinfo=SHANGHAI), 3)
    assert [f.strftime("%a") for f in weekend] == ["Fri", "Sat", "Sun"]


def test_day_of_month_or_day_of_week_as_in_crontab() -> None:
    """Both restricted: crontab fires when either matches (the 1st, and every Monday)."""
    fires = next_fire_times(parse_cron("0 0 1 * 1", SHANGHAI), datetime(2026, 12, 1, tzinfo=SHANGHAI), 3)
    assert [f.day for f in fires] == [1, 7, 14]  # 2026-12-01 is a Tuesday


def test_latest_fire_between_finds_the_newest_tick_only() -> None:
    trigger = parse_cron("0 9 * * *", SHANGHAI)
    after = datetime(2026, 11, 1, tzinfo=SHANGHAI)
    until = datetime(2026, 12, 1, 9, 3, tzinfo=SHANGHAI)
    assert latest_fire_between(trigger, after, until) == datetime(2026, 12, 1, 9, 0, tzinfo=SHANGHAI)
    assert latest_fire_between(trigger, until, until.replace(hour=10)) is None
    every_minute = parse_cron("* * * * *", SHANGHAI)
    year_later = datetime(2027, 12, 1, 9, 3, 30, tzinfo=SHANGHAI)
    assert latest_fire_between(every_minute, after, year_later) == year_later.replace(second=0)


def test_descriptions_in_chinese_and_english() -> None:
    assert describe("0 8 * * 1-5") == "At 08:00, Monday through Friday"
    chinese = describe("0 8 * * 1-5", "zh-CN")
    assert "08:00" in chinese and "星期一" in chinese and "星期五" in chinese and "Monday" not in chinese
    assert "3月" in describe("0 9 1 3 *", "zh-CN")
    # Chinese punctuation, not cron-descriptor's English commas and spaced words (a tester).
    assert chinese == "每星期一至星期五 08:00"
    assert describe("0 9 * * 1,3,5", "zh-CN") == "每星期一、星期三和星期五 09:00"


def test_chinese_descriptions_name_no_english_day_and_say_every_day() -> None:
    """Found by a tester: ``0 8 1 * 1`` read "在 08:00，每月的 1 号，或Monday" (no word boundary
    between 或 and Monday) and a daily time read "在 08:00", which does not say every day."""
    assert describe("0 8 1 * 1", "zh-CN") == "每月1日或每星期一 08:00"
    assert describe("0 8 * * *", "zh-CN") == "每天 08:00"
    assert describe("0 0,12 * * *", "zh-CN") == "每天 00:00 和 12:00"
    assert describe("0 8 * * 1#2", "zh-CN") == "每月第二个星期一 08:00"
    assert describe("0 0 1 */2 *", "zh-CN").endswith("每 2 个月")
    for expression in ("0 8 1 * 1", "0 8 * * 1#2", "0 8 * 6 6", "0 8 1 1 0"):
        assert re.search("[A-Za-z]", describe(expression, "zh-CN")) is None, expression
    assert describe("0 8 * * *") == "At 08:00", "English unchanged"


def test_sunday_written_both_ways_is_named_once() -> None:
    """Tester: ``0 22 * * 0,7`` read "仅在星期日和星期日" / "only on Sunday and Sunday"."""
    assert describe("0 22 * * 0,7", "zh-CN") == "每星期日 22:00"
    assert describe("0 22 * * 0,7", "en") == "At 22:00, only on Sunday"
    assert describe("0 22 * * 1,7", "en") == "At 22:00, only on Monday and Sunday"


@pytest.mark.parametrize(
    ("expression", "chinese"),
    [
        ("0 0 1 1 *", "每年1月1日 00:00"),  # a tester: "在 00:00，每月的 1 号，仅在 1月"
        ("0 8 1-7 * 1", "每月1日至7日或每星期一 08:00"),  # a tester: "在每月的 1 和 7 号之间"
        ("0 8 10 * 1-5", "每月10日或每星期一至星期五 08:00"),  # crontab's OR rule, also for a range
        ("0 12 25 12 *", "每年12月25日 12:00"),
        ("0 0 1 1,7 *", "每年1月和7月的1日 00:00"),
        ("30 6 * 1-3 *", "每年1月至3月的每天 06:30"),
        ("0 8 1,15 * *", "每月1日和15日 08:00"),
        ("0 9 * 3 1#2", "每年3月的第二个星期一 09:00"),
        ("0 8,20 * * *", "每天 08:00 和 20:00"),
    ],
)
def test_chinese_descriptions_read_in_chinese_word_order(expression: str, chinese: str) -> None:
    assert describe(expression, "zh-CN") == chinese


def test_forms_not_worded_here_keep_cron_descriptors_text() -> None:
    assert describe("*/15 * * * *", "zh-CN") == "每 15 分钟"
    assert describe("0 0 1 */2 *", "zh-CN").endswith("每 2 个月")
    assert describe("0 0 1 1 *") == "At 00:00, on day 1 of the month, only in January", "English unchanged"
