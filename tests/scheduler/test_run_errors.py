"""A schedule run's error in the reader's language: the scheduler stores an English sentence from
the catalogue (its ``detail``) and the page and the API word it again, with its values, by code."""

from __future__ import annotations

from datetime import datetime

import pytest

from ventapp.db.schedule_store import RunRecord
from ventapp.scheduler.public import run_public
from ventapp.scheduler.run_errors import run_error_text

# Exactly what the scheduler stored before it kept its sentences in the catalogue (rows on disk).
OLD_MISSED = "This tick was more than 300 seconds late (SCHEDULER_MISFIRE_GRACE_S) and did not run."
OLD_NOT_STARTED = "The run could not be started. The error has been logged."


def _record(code: str | None, error: str | None, status: str = "missed") -> RunRecord:
    when = datetime(2026, 12, 1, 1, 0)
    return RunRecord("r1", "s1", "cron", when, status, None, None, when, when, error, code)


@pytest.mark.parametrize(
    ("code", "stored", "chinese"),
    [("missed", OLD_MISSED, "300 秒"), ("internal", OLD_NOT_STARTED, "未能启动")],
)
def test_a_stored_scheduler_sentence_is_worded_with_its_values(code: str, stored: str, chinese: str) -> None:
    """The schedules page and the API showed these English sentences to a Chinese reader (or lost the seconds)."""
    zh = run_error_text(code, stored, "zh-CN")
    assert chinese in zh and not any(word in zh for word in ("tick", "run could")), zh
    assert run_error_text(code, stored, "en") == stored, "English reads as stored"


def test_the_api_words_a_runs_error_by_accept_language_and_keeps_the_english_as_detail() -> None:
    record = _record("missed", OLD_MISSED)
    zh = run_public(record, "zh-CN")
    assert "300 秒" in zh["error"] and zh["error_detail"] == OLD_MISSED and zh["error_code"] == "missed"
    en = run_public(record, "en")
    assert en["error"] == en["error_detail"] == OLD_MISSED
    assert run_public(_record(None, None, "success"), "zh-CN")["error"] is None, "no error, none worded"


def test_a_pipeline_refusal_stored_in_english_reads_in_chinese_by_its_code() -> None:
    stored = "Daily token quota exceeded."
    zh = run_public(_record("quota", stored, "rejected"), "zh-CN")
    assert zh["error"] != stored and "额度" in zh["error"] and zh["error_detail"] == stored
    assert run_public(_record("quota", stored, "rejected"), "en")["error"] == stored, "English: as stored"
