"""Asking before a message drops a pending call the tab never saw (another tab or client paused the session).

Same set-up as ``test_chat_resume`` (:mod:`tests.state.chat_harness`): the real Reflex event
processor, the pipeline replaced by fakes yielding real contract events; the session's stored
transcript and pending pause are what "the server" holds, changed between the tab's reads as
another tab would change them.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from tests.state.chat_harness import (
    APPROVAL,
    SESSION,
    TOKEN,
    USAGE,
    Client,
)
from ventapp.agent import events as ev
from ventapp.agent.pipeline import ChatRejected
from ventapp.state import chat_state as cs
from ventapp.state import server_view
from ventapp.state.views import ChatMessageView, ToolCardView

HELLO = [
    ChatMessageView(id="u1", role="user", content="hello"),
    ChatMessageView(id="a1", role="assistant", content="Hi!", status="done"),
]
CALC = [
    ChatMessageView(id="u2", role="user", content="calculate (12+8)*3"),
    ChatMessageView(
        id="a2",
        role="assistant",
        tools=[ToolCardView(tool_call_id="c1", tool="calculate", cn_tool="计算器")],
        status="waiting",
    ),
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """The session's stored transcript, as both opening and re-reading it get it."""
    held = SimpleNamespace(messages=list(HELLO))

    async def load_session(session_id: str, user_name: str, lang: str = "en") -> Any:
        return [dataclasses.replace(m) for m in held.messages], "full"

    monkeypatch.setattr(cs, "load_session", load_session)
    monkeypatch.setattr(server_view, "load_session", load_session)
    return held


async def _shown_without_card(
    client: Client,
    server: SimpleNamespace,
    resume: SimpleNamespace,
    stored_after: list[ChatMessageView],
) -> None:
    """The tab shows the answered session; then another tab pauses it (``stored_after``, a pending pause)."""
    await client.fire("open_session", session_id=SESSION)
    state = await client.state()
    assert state.interrupt.kind == "" and [m.id for m in state.messages] == ["u1", "a1"]
    server.messages = stored_after
    resume.pending = APPROVAL


async def test_a_message_asks_first_when_another_tab_left_a_card(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    server: SimpleNamespace,
) -> None:
    """Issue (two tabs): the server's pause is found, shown with its card, and the dialog asks."""
    await _shown_without_card(client, server, resume, [*HELLO, *CALC])

    await client.fire("send", form_data={"message": "never mind"})

    state = await client.state()
    assert pipeline.requests == [], "nothing is sent before the person confirms"
    assert (state.drop_confirm_text, state.drop_confirm_fork) == ("never mind", -1)
    assert (state.interrupt.kind, state.interrupt.token) == ("tool_approval", TOKEN), "as after a reload"
    assert [m.id for m in state.messages] == ["u1", "a1", "u2"]
    assert [card.tool_call_id for card in state.live_tools] == ["c1"]

    pipeline.events = [ev.Token(content="ok"), ev.Done(duration_ms=1, usage=USAGE)]
    resume.pending = None  # the message drops it on the server
    await client.fire("confirm_drop")

    (request,) = pipeline.requests
    assert (request.message, request.fork_turn, request.session_id) == ("never mind", None, SESSION)


async def test_regenerate_after_another_tab_added_a_turn_sends_nothing_and_says_why(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    server: SimpleNamespace,
) -> None:
    """The tester's steps: regenerate "hello" would drop the other tab's turn it never showed."""
    await _shown_without_card(client, server, resume, [*HELLO, *CALC])

    await client.fire("regenerate")

    state = await client.state()
    assert pipeline.requests == [] and state.drop_confirm_text == "", "no dialog for a turn that moved"
    assert [m.id for m in state.messages] == ["u1", "a1", "u2"] and state.interrupt.token == TOKEN
    assert state.interrupt.error == (
        "Nothing was sent: this conversation changed in another tab or client, and it now waits "
        "for your decision here. Look it over, then answer or try again."
    )

    await client.fire("regenerate")  # now of the turn it shows, with the card: the usual dialog
    state = await client.state()
    assert (state.drop_confirm_text, state.drop_confirm_fork) == ("calculate (12+8)*3", 1)
    assert pipeline.requests == []


async def test_regenerate_of_the_same_turn_asks_then_sends(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    server: SimpleNamespace,
) -> None:
    """Another tab regenerated the same turn and it paused: the fork still fits, the dialog asks."""
    await _shown_without_card(client, server, resume, [HELLO[0], CALC[1]])

    await client.fire("regenerate")

    state = await client.state()
    assert pipeline.requests == [] and (state.drop_confirm_text, state.drop_confirm_fork) == ("hello", 0)
    assert [m.id for m in state.messages] == ["u1"] and state.interrupt.token == TOKEN

    pipeline.events = [ev.Token(content="Hi again"), ev.Done(duration_ms=1, usage=USAGE)]
    resume.pending = None
    await client.fire("confirm_drop")

    (request,) = pipeline.requests
    assert (request.message, request.fork_turn) == ("hello", 0)


async def test_an_edit_asks_first_and_keeps_its_box_on_the_re_read_bubble(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    server: SimpleNamespace,
) -> None:
    edited = [ChatMessageView(id="u1-stored", role="user", content="hello"), HELLO[1], *CALC]
    await _shown_without_card(client, server, resume, edited)
    await client.fire("start_edit", message_id="u1")

    await client.fire("send_edit", form_data={"edited": "hello there"})

    state = await client.state()
    assert pipeline.requests == [] and (state.drop_confirm_text, state.drop_confirm_fork) == (
        "hello there",
        0,
    )
    assert state.editing_id == "u1-stored", "the edit box stays open on the bubble as re-read"
    assert state.interrupt.token == TOKEN

    pipeline.events = [ev.Token(content="Hi"), ev.Done(duration_ms=1, usage=USAGE)]
    resume.pending = None
    await client.fire("confirm_drop")

    (request,) = pipeline.requests
    assert (request.message, request.fork_turn) == ("hello there", 0)


async def test_a_session_without_a_pause_sends_at_once(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    server: SimpleNamespace,
) -> None:
    await client.fire("open_session", session_id=SESSION)
    pipeline.events = [ev.Token(content="Hi again"), ev.Done(duration_ms=1, usage=USAGE)]

    await client.fire("regenerate")

    state = await client.state()
    assert [(r.message, r.fork_turn) for r in pipeline.requests] == [("hello", 0)]
    assert state.drop_confirm_text == "" and state.messages[-1].content == "Hi again"


async def test_a_send_where_nothing_is_stored_as_waiting_skips_the_checkpoint(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    server: SimpleNamespace,
) -> None:
    """Hot path: no stored pause, no checkpoint read; the message goes at once."""
    await client.fire("open_session", session_id=SESSION)
    reads = resume.reads
    pipeline.events = [ev.Token(content="ok"), ev.Done(duration_ms=1, usage=USAGE)]

    await client.fire("send", form_data={"message": "next"})

    assert resume.reads == reads, "the checkpoint was not read"
    assert [r.message for r in pipeline.requests] == ["next"]


async def test_retry_of_a_refused_message_asks_first_like_send(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    server: SimpleNamespace,
) -> None:
    """Retry goes through Send's check: another tab paused the session meanwhile, so the dialog asks."""
    await client.fire("open_session", session_id=SESSION)
    pipeline.reject = ChatRejected(429, "quota", "Daily token quota exhausted.")
    await client.fire("send", form_data={"message": "once more"})
    assert (await client.state()).messages[-2].unsent, "refused: the bubble offers Retry"
    server.messages, resume.pending = [*HELLO, *CALC], APPROVAL  # another tab's pause
    pipeline.reject = None

    await client.fire("retry")

    state = await client.state()
    assert len(pipeline.requests) == 1, "nothing is sent again before the person confirms"
    assert (state.drop_confirm_text, state.drop_confirm_fork) == ("once more", -1)
    assert (state.interrupt.kind, state.interrupt.token) == ("tool_approval", TOKEN), "the card shows"
    assert [m.id for m in state.messages] == ["u1", "a1", "u2"], "as the server has it, no unsent copy"

    await client.fire("cancel_drop")
    assert client.browser.values[client.token][-1] == ("ref_chat_input", "once more"), "back in the box"
    assert len(pipeline.requests) == 1
