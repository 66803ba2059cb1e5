"""The refusals of the schedule rules: a ``timezone`` other than ``SCHEDULER_TZ``."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from ventapp.scheduler.rules import refusal_text, timezone_refused, validated

BEIJING = ZoneInfo("Asia/Shanghai")
SUMMER = datetime(2026, 7, 1, 12, tzinfo=UTC)
WINTER = datetime(2026, 1, 15, 12, tzinfo=UTC)


def test_the_example_converts_the_daily_cron_time_from_the_zone_sent() -> None:
    """Tester: the sentence said "08:00 UTC is 16:00 in Beijing" whatever zone was sent."""
    refused = timezone_refused("Asia/Tokyo", "30 9 * * *", BEIJING)
    assert refused.details == {"field": "timezone"} and refused.status == 422
    assert refused.message.endswith("today 09:30 in Asia/Tokyo is 08:30 in Beijing (30 8 * * *).")
    assert refusal_text(refused, "zh-CN").endswith(
        "今天 Asia/Tokyo 的 09:30 即北京时间 08:30（30 8 * * *）。"
    )
    utc = timezone_refused("UTC", "0 8 * * *", BEIJING)
    assert utc.message.endswith("today 08:00 in UTC is 16:00 in Beijing (0 16 * * *).")


def test_a_zone_with_daylight_saving_time_is_converted_as_it_is_today() -> None:
    summer = timezone_refused("Europe/Berlin", "0 8 * * *", BEIJING, now=SUMMER)
    winter = timezone_refused("Europe/Berlin", "0 8 * * *", BEIJING, now=WINTER)
    assert summer.message.endswith("08:00 in Europe/Berlin is 14:00 in Beijing (0 14 * * *).")
    assert winter.message.endswith("08:00 in Europe/Berlin is 15:00 in Beijing (0 15 * * *).")


@pytest.mark.parametrize("cron", [None, "*/5 * * * *", "0 8 * * 1", "garbage"])
def test_without_a_daily_time_the_example_is_08_00_in_the_zone_sent(cron: object) -> None:
    refused = timezone_refused("Asia/Kolkata", cron, BEIJING)
    assert refused.message.endswith("today 08:00 in Asia/Kolkata is 10:30 in Beijing (30 10 * * *).")


@pytest.mark.parametrize("sent", ["UTC+8", "", 8, None, "../etc/passwd", "Asia/Shang\x00hai", "x" * 300])
def test_a_value_that_is_no_zone_gets_the_sentence_without_an_example(sent: object) -> None:
    refused = timezone_refused(sent, "0 8 * * *", BEIJING)
    assert refused.message == (
        "Schedules run in Beijing time (Asia/Shanghai); a schedule cannot have a time zone of its own. "
        "Write the cron in Beijing time."
    )


def test_another_scheduler_zone_names_both_zones() -> None:
    refused = timezone_refused("UTC", "0 8 * * *", ZoneInfo("Europe/London"), now=SUMMER)
    assert refused.message == (
        "Schedules run in the Europe/London time zone; a schedule cannot have a time zone of its own. "
        "Write the cron in Europe/London time: today 08:00 in UTC is 09:00 in Europe/London (0 9 * * *)."
    )
    assert "今天 UTC 的 08:00 即 Europe/London 时间 09:00（0 9 * * *）" in refusal_text(refused, "zh-CN")


def test_validation_refuses_the_zone_with_the_example() -> None:
    with pytest.raises(Exception) as refused:
        validated(
            {"name": "n", "prompt": "p", "cron": "15 7 * * *", "timezone": "Asia/Tokyo"},
            BEIJING,
            partial=False,
        )
    assert "07:15 in Asia/Tokyo is 06:15 in Beijing (15 6 * * *)" in str(refused.value)


def test_a_run_now_refused_for_a_limit_the_user_lowered_names_the_usage_page() -> None:
    """Tester (2 Dec): refused for their own lowered limit, a "Run now" said only that the quota was
    used up; like the chat, it says the usage page raises it again (at the ceiling: as before)."""
    from ventapp.agent.pipeline import ChatRejected
    from ventapp.billing.guard import QuotaStatus, quota_refusal

    lowered = ChatRejected.passed_on(quota_refusal(QuotaStatus(100, "user", 100, 0, ceiling=5_000)))
    assert refusal_text(lowered, "zh-CN").endswith("你可以在用量页面把它调高，最多 5,000 token。")
    at_ceiling = ChatRejected.passed_on(quota_refusal(QuotaStatus(100, "user", 100, 0, ceiling=100)))
    assert refusal_text(at_ceiling, "zh-CN") == "今天的 token 额度已用完，北京时间零点重置。"


@pytest.mark.parametrize(
    ("field", "value", "key"),
    [
        ("name", "报告\u202egpj.exe", "schedules.error.name_invisible"),
        ("name", "a\x00b", "schedules.error.name_invisible"),
        ("prompt", "hello\x00world", "schedules.error.prompt_nul"),
    ],
)
def test_a_name_with_invisible_characters_or_a_prompt_with_nul_is_refused(
    field: str, value: str, key: str
) -> None:
    """Tester (try19): PostgreSQL cannot store NUL; a bidi override spoofs the name's ending."""
    from ventapp.scheduler.rules import ScheduleRejected

    fields = {"name": "n", "prompt": "p", "cron": "15 7 * * *", field: value}
    with pytest.raises(ScheduleRejected) as refused:
        validated(fields, BEIJING, partial=False)
    assert refused.value.key == key and refused.value.details == {"field": field}
    assert refusal_text(refused.value, "zh-CN").startswith("名称" if field == "name" else "提示词")
    assert validated({"prompt": "line\n\ttab"}, BEIJING, partial=True) == {"prompt": "line\n\ttab"}
