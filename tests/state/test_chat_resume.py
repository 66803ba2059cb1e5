"""ChatState headless around a paused run: the card, the resumed run in the same bubble, a reload, Stop.

Same set-up as ``test_chat_state`` (:mod:`tests.state.chat_harness`, with its ``resume`` fixture):
the real Reflex event processor, the pipeline replaced by fakes yielding real contract events.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.state.chat_harness import (
    APPROVAL,
    SESSION,
    TOKEN,
    USAGE,
    Client,
    paused,
)
from ventapp.agent import events as ev
from ventapp.agent.pipeline import CANCELLED_MARKER, ChatRejected
from ventapp.state import chat_state as cs
from ventapp.state import server_view
from ventapp.state.interrupt_view import InterruptView
from ventapp.state.views import ChatMessageView, ToolCardView, message_from_row


async def test_paused_run_keeps_its_bubble_with_the_card(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    state = await paused(client, pipeline)

    assert state.is_streaming is False and state.live_open is True
    assert (state.interrupt.kind, state.interrupt.token) == ("tool_approval", TOKEN)
    assert state.interrupt.submit_label == "Approve"
    assert [m.role for m in state.messages] == ["user"], "nothing is committed while the card waits"
    assert [card.tool_call_id for card in state.live_tools] == ["c1"]
    assert (state.live_status, state.live_notice) == ("", "")


async def test_approve_streams_the_rest_into_the_same_answer(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    await paused(client, pipeline)

    deltas = await client.fire("submit_approval", form_data={})

    (request,) = resume.requests
    assert (request.session_id, request.interrupt_token, request.user_name) == (SESSION, TOKEN, "Ann")
    assert request.answer.decisions == [{"type": "approve"}]
    assert deltas[0]["interrupt"].submitting is True, "the card is disabled at once"
    assert [i for i, d in enumerate(deltas) if "messages" in d] == [len(deltas) - 1]
    state = await client.state()
    user, answer = state.messages
    assert (user.role, answer.role) == ("user", "assistant")
    assert [(t.tool_call_id, t.content) for t in answer.tools] == [("c1", "60")]
    assert answer.content == "The result is 60." and answer.status == "done"
    assert "tokens" in answer.footer and state.context_percent == 1
    assert (state.interrupt.kind, state.is_streaming, state.live_tools) == ("", False, [])


async def test_refused_resume_is_shown_on_the_card(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    await paused(client, pipeline)
    resume.reject = ChatRejected(
        409, "stale_interrupt", "This approval is out of date or was already answered."
    )

    await client.fire("submit_approval", form_data={})

    state = await client.state()
    assert state.interrupt.kind == "tool_approval" and state.interrupt.submitting is False
    assert state.interrupt.error == (
        "This request was already answered, or it is out of date. Reload to see the current one."
    )
    assert state.is_streaming is False and [m.role for m in state.messages] == ["user"]


async def test_a_resume_refused_by_the_quota_leaves_the_call_pending_not_approved(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    """Tester #7 (2 Dec): after 批准 was refused (quota used up) the card read "已由你批准" beside
    "等待你处理"."""
    await paused(client, pipeline)
    resume.reject = ChatRejected(429, "quota", "Daily token quota exhausted.")

    await client.fire("submit_approval", form_data={})

    state = await client.state()
    assert [(card.tool_call_id, card.review) for card in state.live_tools] == [("c1", "")]
    assert state.interrupt.kind == "tool_approval" and state.interrupt.submitting is False
    assert state.interrupt.error != "" and state.is_streaming is False


async def test_invalid_edit_never_resumes(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    await paused(client, pipeline)
    await client.fire("toggle_call", index=0, mode="edit")

    await client.fire("submit_approval", form_data={"args_0": "{not json"})

    state = await client.state()
    assert resume.requests == []
    assert state.interrupt.calls[0].error.startswith("The arguments are not valid JSON")
    assert state.interrupt.calls[0].edit_text == "{not json"

    await client.fire("submit_approval", form_data={"args_0": '{"expression": "2*21"}'})
    assert resume.requests[0].answer.decisions == [{"type": "edit", "args": {"expression": "2*21"}}]


async def test_a_second_click_while_submitting_does_nothing(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    state = await paused(client, pipeline)
    state.interrupt = InterruptView(**{**vars(state.interrupt), "submitting": True})

    await client.fire("submit_approval", form_data={})

    assert resume.requests == []


async def test_sending_while_a_card_waits_asks_first_and_cancel_keeps_both(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    await paused(client, pipeline)
    pipeline.events = [ev.Token(content="ok"), ev.Done(duration_ms=1, usage=USAGE)]

    await client.fire("send", form_data={"message": "never mind"})

    state = await client.state()
    assert state.drop_confirm_text == "never mind", "the dialog opens; nothing is sent yet"
    assert [m.role for m in state.messages] == ["user"] and state.interrupt.kind == "tool_approval"

    await client.fire("cancel_drop")

    state = await client.state()
    assert state.drop_confirm_text == "" and state.interrupt.kind == "tool_approval", "the card stays"
    assert [m.role for m in state.messages] == ["user"]
    assert client.browser.values[client.token][-1] == ("ref_chat_input", "never mind"), "text back in the box"


async def test_confirmed_message_drops_the_pending_call_quietly(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    await paused(client, pipeline)
    pipeline.events = [ev.Token(content="ok"), ev.Done(duration_ms=1, usage=USAGE)]
    await client.fire("send", form_data={"message": "never mind"})

    await client.fire("confirm_drop")

    state = await client.state()
    assert [(m.role, m.status) for m in state.messages] == [
        ("user", "done"),
        ("assistant", "dropped"),
        ("user", "done"),
        ("assistant", "done"),
    ]
    dropped = state.messages[1]
    assert dropped.notice == "You sent a new message instead: the pending call here was dropped."
    assert dropped.error == "" and [card.review for card in dropped.tools] == ["dropped"]
    assert state.interrupt.kind == "" and state.drop_confirm_text == ""


async def test_editing_a_message_while_a_card_waits_asks_first(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    """Issue 12: an edit replaces the paused turn, so it drops the pending call too: the same dialog."""
    state = await paused(client, pipeline)
    question = state.messages[0].id
    pipeline.events = [ev.Token(content="ok"), ev.Done(duration_ms=1, usage=USAGE)]
    await client.fire("start_edit", message_id=question)

    await client.fire("send_edit", form_data={"edited": "please calculate 2*21"})

    state = await client.state()
    assert state.drop_confirm_text == "please calculate 2*21" and len(pipeline.requests) == 1
    assert state.drop_confirm_fork == 0, "the dialog says the turn is resent"
    assert state.interrupt.kind == "tool_approval" and state.editing_id == question

    await client.fire("cancel_drop")
    state = await client.state()
    assert (state.drop_confirm_text, state.editing_id, state.interrupt.kind) == (
        "",
        question,
        "tool_approval",
    )
    assert len(pipeline.requests) == 1 and [m.content for m in state.messages] == [
        "please calculate (12+8)*3"
    ]

    await client.fire("send_edit", form_data={"edited": "please calculate 2*21"})
    await client.fire("confirm_drop")

    state = await client.state()
    sent = pipeline.requests[-1]
    assert (sent.message, sent.fork_turn) == ("please calculate 2*21", 0), "sent as the edit it was"
    assert [(m.role, m.content) for m in state.messages] == [
        ("user", "please calculate 2*21"),
        ("assistant", "ok"),
    ]
    assert (state.editing_id, state.interrupt.kind) == ("", "")


async def test_regenerate_while_a_card_waits_asks_first(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    await paused(client, pipeline)

    await client.fire("regenerate")

    state = await client.state()
    assert state.drop_confirm_text == "please calculate (12+8)*3" and len(pipeline.requests) == 1
    await client.fire("cancel_drop")
    assert client.browser.values.get(client.token, []) == [], "nothing goes into the composer"
    pipeline.events = [ev.Token(content="60"), ev.Done(duration_ms=1, usage=USAGE)]
    await client.fire("regenerate")
    await client.fire("confirm_drop")
    assert pipeline.requests[-1].fork_turn == 0 and (await client.state()).messages[-1].content == "60"


async def test_a_refused_message_after_confirm_brings_the_servers_card_back(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 12: nothing was dropped on the server (the message never ran): the card is shown, not "dropped"."""
    await paused(client, pipeline)
    stored = [
        ChatMessageView(id="u", role="user", content="please calculate (12+8)*3"),
        ChatMessageView(id="a", role="assistant", tools=[ToolCardView(tool_call_id="c1")], status="waiting"),
    ]

    async def load_session(session_id: str, user_name: str, lang: str = "en") -> Any:
        return list(stored), "full"

    monkeypatch.setattr(server_view, "load_session", load_session)
    resume.pending = APPROVAL
    pipeline.reject = ChatRejected(429, "quota", "Daily token quota exhausted.")
    await client.fire("send", form_data={"message": "never mind"})

    await client.fire("confirm_drop")

    state = await client.state()
    assert [m.id for m in state.messages] == ["u"], "no dropped answer, no unsent copy"
    assert (state.interrupt.kind, state.interrupt.token, state.is_streaming) == (
        "tool_approval",
        TOKEN,
        False,
    )
    assert state.interrupt.error == (
        "Your message was not sent: You have used today's token allowance. It resets at midnight "
        "(Beijing time). The pending call still waits for your decision."
    )
    assert [card.tool_call_id for card in state.live_tools] == ["c1"]
    assert client.browser.values[client.token][-1] == ("ref_chat_input", "never mind"), "the text is kept"


async def test_a_dropped_answer_shows_its_stored_footer_once_the_next_one_ends(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 12: live equals reload; the paused part's usage is stored with it, never sent live."""
    rows = [
        SimpleNamespace(id="u1", role="user", content="please calculate (12+8)*3"),
        SimpleNamespace(
            id="a1",
            role="assistant",
            content="",
            tool_calls=[],
            citations=[],
            usage=USAGE.model_dump(mode="json"),
            status="cancelled",
            run_id="r1",
        ),
        SimpleNamespace(id="u2", role="user", content="never mind"),
        SimpleNamespace(
            id="a2",
            role="assistant",
            content="ok",
            tool_calls=[],
            citations=[],
            usage=USAGE.model_dump(mode="json"),
            status="complete",
            run_id="r2",
        ),
    ]
    runs = {"a1": SimpleNamespace(duration_ms=None, error_code="superseded", error="x"), "a2": None}

    async def load_session(session_id: str, user_name: str, lang: str = "en") -> Any:
        return [message_from_row(row, lang, runs.get(row.id)) for row in rows], "full"

    monkeypatch.setattr(server_view, "load_session", load_session)
    await paused(client, pipeline)
    pipeline.events = [ev.Token(content="ok"), ev.Done(duration_ms=1, usage=USAGE)]
    await client.fire("send", form_data={"message": "never mind"})

    await client.fire("confirm_drop")

    dropped = (await client.state()).messages[1]
    assert dropped.status == "dropped" and dropped.footer.startswith("1,234 tokens"), "as after a reload"


async def test_opening_a_paused_session_brings_the_card_back(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stored = [
        ChatMessageView(id="u", role="user", content="please calculate (12+8)*3"),
        ChatMessageView(
            id="a",
            role="assistant",
            tools=[ToolCardView(tool_call_id="c1", tool="calculate", cn_tool="计算器")],
            status="waiting",
        ),
    ]

    async def load_session(
        session_id: str, user_name: str, lang: str = "en"
    ) -> tuple[list[ChatMessageView], str]:
        return list(stored), "full"

    monkeypatch.setattr(cs, "load_session", load_session)
    resume.pending = APPROVAL

    await client.fire("open_session", session_id=SESSION)

    state = await client.state()
    assert state.session_id == SESSION and [m.id for m in state.messages] == ["u"]
    assert state.interrupt.token == TOKEN and [t.tool_call_id for t in state.live_tools] == ["c1"]

    await client.fire("submit_approval", form_data={})
    state = await client.state()
    assert state.messages[0].id == "u" and len(state.messages) == 2
    assert state.messages[1].tools[0].content == "60"


async def test_a_session_without_a_pending_pause_shows_no_card(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def load_session(
        session_id: str, user_name: str, lang: str = "en"
    ) -> tuple[list[ChatMessageView], str]:
        return [ChatMessageView(id="a", role="assistant", status="waiting")], "full"

    monkeypatch.setattr(cs, "load_session", load_session)

    await client.fire("open_session", session_id=SESSION)

    state = await client.state()
    assert state.interrupt.kind == "" and [m.status for m in state.messages] == ["waiting"]


async def test_stop_calls_stop_run_and_the_answer_reads_stopped(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
) -> None:
    state = await client.state()
    state.is_streaming, state.session_id = True, SESSION
    await client.fire("stop")
    assert resume.stops == [(SESSION, "Ann")]

    state.is_streaming = False
    pipeline.events = [
        ev.Token(content="Partial"),
        ev.Error(message="Stopped. The partial answer has been kept.", code="cancelled"),
    ]
    await client.fire("send", form_data={"message": "long answer please"})
    answer = (await client.state()).messages[-1]
    assert (answer.status, answer.error, answer.content) == ("stopped", "", "Partial")
    assert CANCELLED_MARKER not in answer.content, "one Stopped note, never the legacy marker"
