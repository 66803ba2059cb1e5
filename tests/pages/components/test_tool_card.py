"""Which tool cards an answer shows (``ventapp.pages.components.tool_card``), its condition run in Node."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import reflex as rx

from ventapp.agent.nodeless_middleware import PARALLEL_TODOS_ERROR
from ventapp.pages.components.tool_card import shown_at_top
from ventapp.state.views import TODO_TOOL, ToolCardView, tool_card_from_dict

# Reflex's own definitions (reflex_base/.templates/web/utils/state.js), enough for a condition.
_PRELUDE = """
const isTrue = (v) => Array.isArray(v) ? v.length > 0 : (v && typeof v === "object" ? Object.keys(v).length > 0 : Boolean(v));
const pyOr = (a, b) => (isTrue(a) ? a : b());
const pyAnd = (a, b) => (isTrue(a) ? b() : a);
"""


def _shown(card: ToolCardView) -> bool:
    condition = shown_at_top(rx.Var.create(card).to(ToolCardView))
    script = f"{_PRELUDE}\nprocess.stdout.write(JSON.stringify(Boolean({condition!s})));"
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return bool(json.loads(done.stdout))


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node (Reflex's own build needs it too)")
def test_a_refused_task_list_update_is_a_card_saying_so() -> None:
    """Tester: two ``write_todos`` in one step were refused, and the chat showed nothing at all."""
    refused = tool_card_from_dict(
        {
            "tool_call_id": "t2",
            "tool": TODO_TOOL,
            "args": {"todos": []},
            "content": PARALLEL_TODOS_ERROR,
            "error": True,
        },
        "zh-CN",
    )
    assert refused.summary.startswith("同一步里两次更新了任务清单"), "worded for the person"
    assert _shown(refused) is True
    kept = ToolCardView(tool_call_id="t1", tool=TODO_TOOL, content="Updated todo list", done=True)
    assert _shown(kept) is False, "a list that took effect is the task panel, not a card"
    assert _shown(ToolCardView(tool_call_id="c", tool="calculate")) is True
    assert _shown(ToolCardView(tool_call_id="n", tool="calculate", parent="task-1")) is False, (
        "in its sub-agent's"
    )
    nested_refusal = ToolCardView(tool_call_id="n2", tool=TODO_TOOL, error=True, parent="task-1")
    assert _shown(nested_refusal) is False
