"""The line under an answer (``ventapp.state.usage_words``): its cost follows the usage page's rule."""

from __future__ import annotations

from ventapp.agent import events as ev
from ventapp.i18n import formats
from ventapp.state.usage_words import cost_text, usage_footer


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
