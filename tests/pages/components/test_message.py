"""A failed answer's callout (``ventapp.pages.components.message``), compiled (no browser)."""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.message import error_callout


class _Bubble(rx.State):
    error: str = ""
    detail: str = ""
    usage_link: bool = False


def test_a_quota_the_user_lowered_links_to_the_usage_page() -> None:
    """Tester (2 Dec): refused for a limit they lowered themselves, users were told nothing about
    where to raise it again; the callout links to ``/usage`` when the refusal says they may."""
    compiled = str(error_callout(_Bubble.error, _Bubble.detail, _Bubble.usage_link))
    assert "quota-usage-link" in compiled and '"/usage"' in compiled
    assert "usage_link" in compiled, "shown only for such a refusal"
    assert "quota-usage-link" not in str(error_callout(_Bubble.error, _Bubble.detail))
