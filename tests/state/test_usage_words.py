"""The line under an answer (``ventapp.state.usage_words``): its cost follows the usage page's rule; a
quota refusal the user can lift themselves names the usage page."""

from __future__ import annotations

from ventapp.agent import events as ev
from ventapp.billing import guard
from ventapp.i18n import formats
from ventapp.state.live_answer import LiveAnswer, to_message
from ventapp.state.usage_words import cost_text, usage_footer
from ventapp.state.views import worded_error


def test_answer_footers_show_every_cost_by_the_usage_pages_rule() -> None:
    """Tester (20_usage, 98_mobile_usage): footers read "¥0.00134" and "¥0.001382", the usage page
    "¥0.019287"; every cost now has ``formats.COST_SIGNIFICANT`` digits, as on the usage page."""
    for micros, shown in ((1340, "¥0.00134"), (1382, "¥0.00138"), (19287, "¥0.0193"), (1_500_000, "¥1.50")):
        usage = ev.Usage(
            input_tokens=10, output_tokens=5, total_tokens=15, cost_micros=micros, currency="CNY"
        )
        assert cost_text(usage, "zh-CN") == shown == formats.money(micros, "CNY", "zh-CN")
        assert usage_footer(usage, None, "zh-CN").endswith(f" · {shown}")
        stored = usage_footer(usage.model_dump(), None, "zh-CN")  # a reloaded answer's stored usage
        assert stored == usage_footer(usage, None, "zh-CN")


def _quota_refusal(used: int, limit: int, ceiling: int | None) -> str:
    """The English sentence a quota refusal keeps (the UI holds only it and its code)."""
    status = guard.QuotaStatus(limit, "user", used, 0, ceiling if ceiling is not None else limit)
    return guard.quota_refusal(status).message


def test_a_quota_the_user_lowered_is_worded_with_the_usage_page_and_a_link() -> None:
    """Tester (2 Dec): the bubble said "今天的 token 额度已用完，北京时间零点重置。" also when the user had
    lowered the limit themselves and could raise it again: it names the usage page, the ceiling, links there."""
    message = _quota_refusal(12_000, 10_000, 50_000)
    plain, detail = worded_error("quota", message, "zh-CN")
    assert (
        plain
        == "今天的 token 额度已用完，北京时间零点重置。这个额度是你自己调低的，你可以在用量页面把它调高，最多 50,000 token。"
    )
    assert detail.startswith("你今天已用 12,000 个 token，每日额度为 10,000。"), "the detail in Chinese too"
    assert "up to 50,000 (the limit an operator set)" in worded_error("quota", message, "en")[0]
    assert "或取消" in worded_error("quota", _quota_refusal(10, 10, 0), "zh-CN")[0]
    bubble = to_message(LiveAnswer(error=message, error_code="quota", lang="zh-CN"))
    assert bubble.usage_link and bubble.error == plain

    at_ceiling = _quota_refusal(10_000, 10_000, None)
    assert worded_error("quota", at_ceiling, "zh-CN")[0] == "今天的 token 额度已用完，北京时间零点重置。"
    assert not to_message(LiveAnswer(error=at_ceiling, error_code="quota", lang="zh-CN")).usage_link
    stopped = "Your daily token quota is used up, so the answer was stopped."  # mid-run: no ceiling known
    assert not to_message(LiveAnswer(error=stopped, error_code="quota", lang="zh-CN")).usage_link
