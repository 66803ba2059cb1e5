"""Numbers, dates, durations and sizes per language (Babel's CLDR data)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from ventapp.i18n import formats

SHANGHAI = ZoneInfo("Asia/Shanghai")


def test_numbers_group_thousands_and_compact_per_language() -> None:
    assert formats.number(1234567, "en") == formats.number(1234567, "zh-CN") == "1,234,567"
    assert formats.number(1.5, "en", digits=2) == "1.50"
    assert formats.compact(128000, "en") == "128K"
    assert formats.compact(128000, "zh-CN") == "12.8万"
    assert formats.compact(999, "zh-CN") == "999"
    assert formats.compact(1039, "zh-CN") == "1,039", "no bare digits below 万"


def test_durations_and_sizes_carry_their_units_in_the_language() -> None:
    assert formats.duration_s(2400, "en") == "2.4 sec"
    assert formats.duration_s(2400, "zh-CN") == "2.4秒"
    assert formats.file_size(20 * 1024, "en") == "20 kB"
    assert formats.file_size(3_500_000, "zh-CN") == "3.3 MB"
    assert formats.file_size(10, "en") == "0.1 kB", "never raw bytes, never 0 for a non-empty file"
    assert formats.file_size(512, "en") == "0.5 kB"
    assert formats.file_size(0, "en") == "0 kB"


def test_dates_are_local_to_the_reader_and_written_per_language() -> None:
    stored = datetime(2026, 12, 1, 0, 5)  # naive UTC, as the database keeps it
    assert formats.date_time(stored, "zh-CN", SHANGHAI) == "2026/12/1 08:05"
    assert formats.date_time(stored.replace(tzinfo=UTC), "en", SHANGHAI) == "Dec 1, 2026, 08:05"
    assert formats.date_time(None, "en", SHANGHAI) == ""
    assert formats.long_date(date(2026, 12, 1), "zh-CN") == "2026年12月1日"
    assert formats.long_date(date(2026, 12, 1), "en") == "Dec 1, 2026"


def test_every_cost_follows_one_precision_rule() -> None:
    """Tester: the usage ledger read ``¥0.00071`` beside ``¥0.000676`` (trailing zeros dropped)."""
    shown = [formats.money(micros, "CNY", "zh-CN") for micros in (710, 676, 12_300, 1_500_000, 12_345_600)]
    assert shown == ["¥0.000710", "¥0.000676", "¥0.0123", "¥1.50", "¥12.35"]
    assert formats.money(1_234_567_890, "USD", "en") == "$1,234.57"
    assert formats.money(999_999, "CNY", "en") == "¥1.00", "rounded up to the next power of ten"
    assert formats.money(83, "CNY", "en") == "¥0.000083", "never finer than the micro-unit"
    assert formats.money(0, "CNY", "en") == "¥0.00"


def test_english_quota_sentences_put_no_count_of_one_before_a_plural() -> None:
    """try18: a daily limit of 1 read "56,191 of 1 tokens used today"."""
    from ventapp.i18n import t

    line = t("usage.quota_line", "en", used="56,191", limit="1", left="0", tz="Asia/Shanghai")
    confirm = t("usage.limit_confirm", "en", used="56,191", count="1")
    for sentence in (line, confirm):
        assert "1 tokens" not in sentence and "1 token " not in sentence, sentence
