"""The usage page's components, compiled (no browser): what the chart's numbers look like."""

from __future__ import annotations

from ventapp.pages.usage import _chart


def test_the_charts_axis_and_tooltip_group_thousands() -> None:
    """Tester: the token chart's axis read 12000 while every other number on the page reads 12,000."""
    compiled = str(_chart())
    assert compiled.count("Intl.NumberFormat") == 2
    assert "tickFormatter" in compiled and "formatter" in compiled.replace("tickFormatter", "")
