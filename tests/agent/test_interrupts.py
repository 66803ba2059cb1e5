"""Turning a client's answer into the resume value (what the checkpointer must store)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ventapp.agent.interrupts import (
    ResumeAnswer,
    ResumeInvalid,
    approval_reason,
    remembered,
    resume_value,
    to_event,
)
from ventapp.tools.registry import load_builtin_tools

PENDING = {"action_requests": [{"name": "calculate", "args": {"expression": "1+1"}, "description": "ok?"}]}


class _Proxy(dict):  # what UI frameworks hand in: a dict look-alike the checkpointer cannot serialise
    pass


def test_edited_args_become_plain_json() -> None:
    value = resume_value(
        PENDING, ResumeAnswer(decisions=[{"type": "edit", "args": _Proxy(expression="2*21")}])
    )
    args = value["decisions"][0]["edited_action"]["args"]
    assert type(args) is dict and args == {"expression": "2*21"}


def test_non_json_args_are_refused() -> None:
    with pytest.raises(ResumeInvalid):
        resume_value(PENDING, ResumeAnswer(decisions=[{"type": "edit", "args": {"x": object()}}]))


def test_one_decision_per_call() -> None:
    with pytest.raises(ResumeInvalid) as refused:
        resume_value(PENDING, ResumeAnswer(decisions=[]))
    assert refused.value.key == "refusal.resume.decision_count"
    assert (refused.value.loc, refused.value.params) == (["body", "decisions"], {"expected": 1, "got": 0})


@pytest.mark.parametrize(
    ("decisions", "key", "loc"),
    [
        ([{"type": "edit"}], "refusal.resume.edit_args", ["body", "decisions", 0, "args"]),
        (
            [{"type": "edit", "args": {"x": object()}}],
            "refusal.resume.edit_json",
            ["body", "decisions", 0, "args"],
        ),
        ([{"type": "maybe"}], "refusal.resume.decision_type", ["body", "decisions", 0, "type"]),
    ],
)
def test_a_refused_decision_names_its_sentence_and_where_it_is(
    decisions: list[dict[str, object]], key: str, loc: list[object]
) -> None:
    """Tester: the checks were lowercase developer strings with ``errors[].loc == []``."""
    with pytest.raises(ResumeInvalid) as refused:
        resume_value(PENDING, ResumeAnswer(decisions=decisions))
    assert (refused.value.key, refused.value.loc) == (key, loc)


def test_remember_on_a_reject_points_at_that_decision() -> None:
    pending = {"action_requests": [PENDING["action_requests"][0]] * 2}
    answer = ResumeAnswer(decisions=[{"type": "approve"}, {"type": "reject", "remember": "always"}])
    with pytest.raises(ResumeInvalid) as refused:
        remembered(pending, answer)
    assert (refused.value.key, refused.value.loc) == (
        "refusal.resume.remember_reject",
        ["body", "decisions", 1, "remember"],
    )


def test_approval_requests_carry_a_reason_code_beside_the_english_reason() -> None:
    load_builtin_tools()  # the labels
    ours = {"name": "calculate", "args": {"expression": "1"}, "description": approval_reason("calculate")}
    default = {
        "name": "calculate",
        "args": {},
        "description": "Tool execution requires approval\n\nTool: calculate",
    }
    own = {"name": "write_file", "args": {}, "description": "Writes report.md into the workspace."}
    pending = SimpleNamespace(id="tok", value={"action_requests": [ours, default, own], "review_configs": []})

    approval = to_event(pending).tool_approval or {}

    assert ours["description"] == "计算器 (calculate) needs your approval before it runs.", "legacy text kept"
    assert [r["reason_code"] for r in approval["requests"]] == ["needs_approval", "default", ""]
    assert approval["reason_code"] == "needs_approval" and approval["reason"] == ours["description"]
