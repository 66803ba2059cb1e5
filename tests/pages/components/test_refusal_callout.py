"""Refusals on every page read the same way: one shared red callout (``refusal_callout``), compiled."""

from __future__ import annotations

import re

from ventapp.pages import login, schedules, usage
from ventapp.pages.components.page_frame import refusal_callout

_CALLOUT = re.compile(r"jsx\(RadixThemesCallout\.Root,\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
"""A callout's props object (one level of nested braces: its ``css``)."""


def _callouts(compiled: str) -> dict[str, str]:
    """Each callout's props by its id (``""`` for one without); a red one wins over another of its id
    (``#schedules-notice`` is a refusal or, in blue, a plain notice)."""
    found: dict[str, str] = {}
    for props in _CALLOUT.findall(compiled):
        match = re.search(r'\bid:"([^"]+)"', props)
        key = match.group(1) if match else ""
        if 'color:"red"' in props or key not in found:
            found[key] = props
    return found


def test_every_pages_red_callout_is_the_shared_refusal_callout() -> None:
    """Lead (ui12): each page wrote its refusal box inline (schedules, usage, login), each a little
    differently; they are one component now, red with the warning icon, heard as an alert."""
    compiled = {
        "usage": str(usage._body()),
        "schedules": str(schedules._body()) + str(schedules._form()),
        "login": str(login.login_page()),
    }
    wanted = {
        "usage": {"usage-problem"},
        "schedules": {"schedules-problem", "schedules-notice", "cron-error", "form-error"},
        "login": {"login-error"},
    }
    for page, ids in wanted.items():
        callouts = _callouts(compiled[page])
        red = {key for key, props in callouts.items() if 'color:"red"' in props}
        assert red == ids, f"{page}: red callouts {red}"
        for key in ids:
            assert "refusal-callout" in callouts[key], f"{page}: #{key} is written inline"
    alerts = _callouts(compiled["schedules"])
    assert 'role:"alert"' in alerts["form-error"] and 'role:"alert"' not in alerts["cron-error"]


def test_the_refusal_callout_keeps_the_callers_class_and_size() -> None:
    props = _callouts(str(refusal_callout("x", id="a", size="1", class_name="schedules-refused")))["a"]
    assert 'className:"refusal-callout schedules-refused"' in props and 'size:"1"' in props
    assert "triangle_alert" in props and 'role:"alert"' in props
