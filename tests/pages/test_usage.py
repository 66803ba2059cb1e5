"""The usage page's components, compiled (no browser): what the chart's numbers look like."""

from __future__ import annotations

from ventapp.pages.usage import _chart


def test_the_charts_axis_and_tooltip_group_thousands() -> None:
    """Tester: the token chart's axis read 12000 while every other number on the page reads 12,000."""
    compiled = str(_chart())
    assert compiled.count("Intl.NumberFormat") == 2
    assert "tickFormatter" in compiled and "formatter" in compiled.replace("tickFormatter", "")


def _props(compiled: str, component: str) -> str:
    """The props object of ``component``'s first ``jsx(...)`` call, as compiled."""
    start = compiled.index(f"jsx({component},") + len(f"jsx({component},")
    depth = 0
    for end, char in enumerate(compiled[start:], start):
        depth += {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}.get(char, 0)
        if depth == 0:
            return compiled[start : end + 1]
    raise AssertionError(f"{component}'s props do not close")


def test_the_tooltip_groups_thousands_with_its_own_formatter_not_a_style() -> None:
    """Found while fixing the axis: ``tooltip(formatter=…)`` compiled into ``wrapperStyle`` (a CSS
    object), so the tooltip still read 12000."""
    tooltip = _props(str(_chart()), "RechartsTooltip")
    assert "wrapperStyle" not in tooltip and "formatter:((value) => new Intl.NumberFormat" in tooltip


def test_the_day_labels_are_evenly_spaced_and_the_token_axis_has_a_sensible_range() -> None:
    """Tester (80_quota_set, 98_mobile_usage): the 14 day labels ran every other day, then crowded at
    the end; with no usage the token axis read 0–4. Tester #11 (2 Dec): counted from the first day,
    the step left today's bar, the last, unlabelled — they are counted back from today."""
    compiled = str(_chart())
    assert 'interval:"equidistantPreserveEnd"' in _props(compiled, "RechartsXAxis")
    y_axis = _props(compiled, "RechartsYAxis")
    assert "allowDecimals:false" in y_axis and "tickCount:5" in y_axis
    assert "domain:[0, (dataMax) => { const quarter = Math.max(dataMax, 1000) / 4;" in y_axis
