"""Fixed refusals: their English sentence (the API's ``detail``) is what the API always answered."""

from __future__ import annotations

import pytest

from ventapp.agent.refusals import ChatRejected, rejected, session_not_found, user_name_refused
from ventapp.billing.guard import BillingRejected
from ventapp.i18n import t
from ventapp.identity import InvalidUserName, normalize_user_name
from ventapp.refusal import Refusal


@pytest.mark.parametrize("raw", [" ", "a\u200bb", "x" * 129, "a/b", "..", "O'Brien\x00"])
def test_a_refused_user_name_keeps_the_rules_english_and_words_it_in_chinese(raw: str) -> None:
    with pytest.raises(InvalidUserName) as caught:
        normalize_user_name(raw)
    refused = user_name_refused(caught.value)
    assert (refused.status, refused.code) == (400, "bad_request")
    assert refused.message == caught.value.message, "detail unchanged"
    assert refused.key == f"refusal.user_name.{caught.value.cause}"
    chinese = t(refused.key, "zh-CN", **refused.params)
    assert "user_name" in chinese and chinese != refused.message and "{" not in chinese


def test_a_refusal_takes_its_english_from_the_catalogue_with_its_values() -> None:
    gone = rejected(410, "gone", "refusal.gone", first_seq=7)
    assert gone.message.endswith("(oldest kept: 7)") and gone.params == {"first_seq": 7}
    assert "7" in t(gone.key, "zh-CN", **gone.params)
    missing = session_not_found()
    assert (missing.status, missing.code, missing.message) == (404, "not_found", "Session not found.")


def test_a_refusal_of_its_own_words_has_no_key() -> None:
    own = ChatRejected(400, "unknown_skill", "There is no skill named 'x'.")
    assert own.key == "" and own.params == {}


def test_a_billing_refusal_passed_on_keeps_every_field_and_words_in_chinese() -> None:
    quota = BillingRejected(
        429, "quota", "You have used 5 of your 5 tokens.", retry_after=60, key="refusal.quota",
        params={"used": 5, "limit": 5, "tz": "Asia/Shanghai"},
    )  # fmt: skip
    refused = ChatRejected.passed_on(quota)
    assert isinstance(refused, ChatRejected) and isinstance(refused, Refusal)
    assert (refused.status, refused.code, refused.message, refused.retry_after) == (
        429, "quota", quota.message, 60,
    )  # fmt: skip
    assert (refused.key, refused.params) == ("refusal.quota", quota.params)
    assert "5" in t(refused.key, "zh-CN", **refused.params) and refused.details == {}


def test_numbers_in_a_refusal_are_grouped_and_no_count_reads_as_a_wrong_plural() -> None:
    """Tester (try17, H): "消息超过 100000 个字符。", "最多可设为 20000 token" and English
    "You have used 7,594 of your 1 tokens"."""
    from ventapp.auth.service import AuthRejected

    long = ChatRejected.by_key(400, "bad_request", "refusal.message_too_long", limit=100_000)
    assert long.worded("zh-CN") == "消息超过 100,000 个字符。"
    raise_quota = AuthRejected.by_key(403, "operator_only", "refusal.auth.raise_quota", ceiling=20_000)
    assert "最多可设为 20,000 token" in raise_quota.worded("zh-CN")
    quota = BillingRejected.by_key(429, "quota", "refusal.quota", used=7594, limit=1, tz="Asia/Shanghai")
    assert quota.worded("en").startswith("Tokens used today: 7,594 of your daily quota of 1.")
    assert "1 tokens" not in quota.worded("en") and "7,594" in quota.worded("zh-CN")
