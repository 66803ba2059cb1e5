"""Figures a tool result lists (``data.figures``) become images of its card, live and from history."""

from __future__ import annotations

import json

from ventapp.agent import events as ev
from ventapp.state.live_answer import LiveAnswer, reduce_event
from ventapp.state.views import figure_paths, tool_card_from_dict

RESULT = json.dumps(
    {
        "data": {
            "converged": True,
            "figures": ["/workspace/results/a-network.png", "/etc/passwd.png", "/workspace/results/a.svg", 3],
        },
        "sources": [],
    }
)


def test_only_workspace_images_are_figures() -> None:
    assert figure_paths(RESULT) == ["/workspace/results/a-network.png"]
    assert figure_paths("not json") == [] and figure_paths('{"data": [1]}') == [] and figure_paths(None) == []


def test_live_tool_result_carries_its_figures_and_an_error_none() -> None:
    fields = {
        "session_id": "s",
        "trace_id": "t",
        "tool": "solve_ventilation_network",
        "cn_tool": "通风网络解算",
    }
    live = reduce_event(LiveAnswer(), ev.ToolResult(**fields, content=RESULT, tool_call_id="c1"))
    failed = reduce_event(
        LiveAnswer(), ev.ToolResult(**fields, content=RESULT, error=True, tool_call_id="c2")
    )

    assert live.tools[0].figures == ["/workspace/results/a-network.png"]
    assert failed.tools[0].figures == []


def test_stored_tool_card_carries_its_figures() -> None:
    card = tool_card_from_dict({"tool_call_id": "c1", "tool": "solve_ventilation_network", "content": RESULT})
    assert card.figures == ["/workspace/results/a-network.png"]
