"""Approval reasons worded per request language (``ventapp.api.wording``), offline."""

from __future__ import annotations

from ventapp.agent import events as ev
from ventapp.agent.interrupts import approval_reason, to_event
from ventapp.api.wording import worded
from ventapp.tools.registry import load_builtin_tools


def _paused_batch() -> ev.Interrupt:
    value = {
        "action_requests": [
            {"name": "calculate", "args": {"expression": "1"}, "description": approval_reason("calculate")},
            {
                "name": "calculate",
                "args": {"expression": "2"},
                "description": "Tool execution requires approval",
            },
            {"name": "calculate", "args": {"expression": "3"}, "description": "Ask the shift lead first."},
        ],
        "review_configs": [],
    }
    return to_event(type("Pending", (), {"id": "tok", "value": value})())


def test_coded_reasons_are_worded_in_one_language_and_a_reason_of_its_own_is_kept() -> None:
    load_builtin_tools()  # the labels
    event = _paused_batch()
    zh = worded(event, "zh-CN")
    en = worded(event, "en")
    assert isinstance(zh, ev.Interrupt) and isinstance(en, ev.Interrupt)
    assert zh.tool_approval is not None and en.tool_approval is not None
    assert [r["reason"] for r in zh.tool_approval["requests"]] == [
        "计算器需要你批准后才会运行。",
        "计算器需要你批准后才会运行。",
        "Ask the shift lead first.",
    ]
    assert en.tool_approval["reason"] == "Calculator needs your approval before it runs."
    assert [r["reason_code"] for r in en.tool_approval["requests"]] == ["needs_approval", "default", ""]
    assert event.tool_approval is not None and "(calculate)" in event.tool_approval["reason"], (
        "not changed in place"
    )


def test_other_events_pass_through_unchanged() -> None:
    token = ev.Token(content="x")
    assert worded(token, "en") is token
