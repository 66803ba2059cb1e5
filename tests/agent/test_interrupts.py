"""Turning a client's answer into the resume value (what the checkpointer must store)."""

from __future__ import annotations

import pytest

from ventapp.agent.interrupts import ResumeAnswer, ResumeInvalid, resume_value

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
    with pytest.raises(ResumeInvalid, match="expected 1"):
        resume_value(PENDING, ResumeAnswer(decisions=[]))
