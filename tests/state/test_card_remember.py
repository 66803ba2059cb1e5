"""The approval card's "don't ask again" (try19): the answer it builds carries the API's ``remember``.

The pure part (:func:`approval_answer` from the card's form) and ChatState headless (the answer
reaches ``start_resume`` — the code path ``POST /api/chat/resume`` uses to store the rule — as sent).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.state.chat_harness import Client, paused
from ventapp.agent import events as ev
from ventapp.agent.interrupts import ResumeAnswer, remembered
from ventapp.state import interrupt_view as iv
from ventapp.state.interrupt_view import approval_answer, interrupt_view, with_mode


def approval(*expressions: str) -> ev.Interrupt:
    requests = [
        {"tool": "calculate", "args": {"expression": e}, "reason_code": "default"} for e in expressions
    ]
    return ev.Interrupt(
        kind="tool_approval",
        tool_approval={**requests[0], "count": len(requests), "requests": requests},
        interrupt_token="tok",
        tool_call_ids=[f"call_{i}" for i in range(len(requests))],
    )


def test_an_approval_is_just_this_once_by_default() -> None:
    view = interrupt_view(approval("1+1"), "en")

    answer, shown = approval_answer(view, {})

    assert view.calls[0].rememberable is True
    assert answer == ResumeAnswer(decisions=[{"type": "approve"}])
    assert shown.calls[0].remember == ""


def test_dont_ask_again_goes_with_the_approval_as_the_apis_remember() -> None:
    answer, shown = approval_answer(interrupt_view(approval("1+1"), "en"), {"remember_0": "session"})

    assert answer is not None and answer.decisions == [{"type": "approve", "remember": "session"}]
    assert shown.calls[0].remember == "session", "kept when the card is shown again"
    # The agent layer reads it as the rule it stores (the same check as the API's).
    assert remembered(SimpleNamespace(value={"action_requests": [{"name": "calculate"}]}), answer) == [
        ("calculate", "session")
    ]


def test_in_a_batch_remember_is_per_call_and_only_on_approved_calls() -> None:
    view = with_mode(with_mode(interrupt_view(approval("1", "2", "3", "4"), "en"), 1, "edit"), 2, "reject")
    form = {
        "remember_0": "always",
        "remember_1": "session",  # an edit is asked about again: the card hides the choice
        "remember_2": "always",  # so is a reject (the API refuses it: 422)
        "args_1": '{"expression": "5"}',
    }

    answer, _ = approval_answer(view, form)

    assert answer is not None
    assert [d.get("remember") for d in answer.decisions] == ["always", None, None, None]
    assert [d["type"] for d in answer.decisions] == ["approve", "edit", "reject", "approve"]


def test_a_tool_that_must_be_approved_every_time_is_never_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(iv, "is_rememberable", lambda tool: tool != "calculate")
    view = interrupt_view(approval("1"), "en")

    answer, _ = approval_answer(view, {"remember_0": "always"})

    assert view.calls[0].rememberable is False, "the card offers no choice"
    assert answer is not None and answer.decisions == [{"type": "approve"}]


def test_an_unknown_scope_is_just_this_once() -> None:
    answer, _ = approval_answer(interrupt_view(approval("1"), "en"), {"remember_0": "forever"})

    assert answer is not None and answer.decisions == [{"type": "approve"}]


async def test_the_cards_remember_reaches_the_resume(
    client: Client, pipeline: SimpleNamespace, resume: SimpleNamespace
) -> None:
    await paused(client, pipeline)

    await client.fire("submit_approval", form_data={"remember_0": "session"})

    (request,) = resume.requests
    assert request.answer.decisions == [{"type": "approve", "remember": "session"}]
