"""Cron refusals: one cause per mistake, worded as one sentence in the page's language."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest

from ventapp.scheduler.cron import parse_cron
from ventapp.scheduler.cron_problems import CronInvalid, cron_message

SHANGHAI = ZoneInfo("Asia/Shanghai")
_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")


def _refusal(expression: str) -> CronInvalid:
    with pytest.raises(CronInvalid) as problem:
        parse_cron(expression, SHANGHAI)
    return problem.value


@pytest.mark.parametrize(
    ("expression", "field", "cause", "zh_part", "en_part"),
    [
        ("*/0 * * * *", "minute", "bad_step", "分钟字段的步长须为大于 0 的整数", "step in the minute field"),
        ("0 */0 * * *", "hour", "bad_step", "小时字段的步长", "step in the hour field"),
        ("0 0 1-5/0 * *", "day", "bad_step", "日字段的步长", "step in the day field"),
        ("0 0 * * */0", "day_of_week", "bad_step", "星期字段的步长", "step in the day of the week field"),
        ("0 0 31 2 *", "cron", "never_fires", "永远不会触发", "never fires"),
        ("0 0 31 4,6 *", "cron", "never_fires", "永远不会触发", "never fires"),
        ("61 8 * * *", "minute", "out_of_range", "分钟须在 0–59 之间，61 超出范围", "between 0 and 59; 61"),
        ("0 25 * * *", "hour", "out_of_range", "小时须在 0–23 之间", "between 0 and 23"),
        ("0 0 0 * *", "day", "out_of_range", "日须在 1–31 之间", "between 1 and 31"),
        ("0 8 * 13 *", "month", "out_of_range", "月须在 1–12 之间", "between 1 and 12"),
        ("0 8 * * 9", "day_of_week", "out_of_range", "星期须在 0–7 之间", "between 0 and 7"),
        ("5-1 * * * *", "minute", "backwards_range", "起点大于终点", "starts after it ends"),
        ("0 8 * * 5-2", "day_of_week", "backwards_range", "起点大于终点", "starts after it ends"),
        ("x 8 * * *", "minute", "unrecognized", "分钟字段无法识别“x”", "cannot read “x”"),
        ("0 8 *", "cron", "field_count", "这里有 3 段", "this one has 3"),
    ],
)
def test_each_cause_is_one_sentence_in_each_language(
    expression: str, field: str, cause: str, zh_part: str, en_part: str
) -> None:
    problem = _refusal(expression)
    assert (problem.field, problem.cause) == (field, cause)
    zh, en = cron_message(problem, "zh-CN"), cron_message(problem, "en")
    assert zh_part in zh and en_part in en
    # The Chinese sentence carries no English parser text, and neither carries a second rule.
    assert not _LATIN_WORD.search(zh.replace("cron", "")), zh
    for sentence in (zh, en):
        assert "(" + problem.reason not in sentence and "（" + problem.reason not in sentence
        assert sentence.count("。") + sentence.count(". ") <= 1, sentence


def test_a_zero_step_does_not_lead_with_the_range_rule() -> None:
    """``*/0`` used to read "分钟须为 0–59。（Increment must be higher than 0）"."""
    zh = cron_message(_refusal("*/0 * * * *"), "zh-CN")
    assert "0–59" not in zh and "Increment" not in zh


def test_a_never_firing_expression_is_not_blamed_on_the_field_count() -> None:
    """``0 0 31 2 *`` used to read "须为 5 段 …，或这个表达式永远不会触发"."""
    zh = cron_message(_refusal("0 0 31 2 *"), "zh-CN")
    en = cron_message(_refusal("0 0 31 2 *"), "en")
    assert "5 段" not in zh and "5 fields" not in en and "never" not in zh


@pytest.mark.parametrize(
    ("expression", "day", "month"), [("0 0 31 2 *", "31", "2"), ("0 0 30 2 *", "30", "2")]
)
def test_a_never_firing_reason_and_sentence_name_the_same_date(expression: str, day: str, month: str) -> None:
    """Tester: for ``0 0 31 2 *`` the reason said "e.g. 30 February" while the message said 31."""
    problem = _refusal(expression)
    zh, en = cron_message(problem, "zh-CN"), cron_message(problem, "en")
    assert f"day {day!r}" in problem.reason and f"month in {month!r}" in problem.reason
    assert f"({month}) has day {day}." in en and f"（{month}）里没有 {day} 日" in zh
    other = "30" if day == "31" else "31"
    assert other not in problem.reason + en + zh, "no second, different date anywhere"


def test_month_names_and_steps_still_parse() -> None:
    for expression in ("0 8 * jan-mar *", "*/5 * * * *", "0 8 1-31/2 * *", "0 8 * * mon-fri"):
        parse_cron(expression, SHANGHAI)
