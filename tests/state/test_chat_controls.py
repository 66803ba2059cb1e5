"""Which stored turn a bubble is, and the transcript an edit or regenerate starts from (``chat_controls``)."""

from __future__ import annotations

from typing import Any

from tests.state.test_live_follow import (  # noqa: F401  # llm, runtime and tabs are fixtures
    USER,
    Tab,
    llm,
    runtime,
    tabs,
)
from ventapp.agent.runtime import AgentRuntime
from ventapp.billing import guard
from ventapp.state.chat_controls import attachments_at_turn, truncated_at_turn, turn_of
from ventapp.state.views import ChatMessageView


def _transcript() -> list[ChatMessageView]:
    return [
        ChatMessageView(id="u1", role="user", content="first"),
        ChatMessageView(id="a1", role="assistant", content="one"),
        ChatMessageView(id="u2", role="user", content="refused", unsent=True),
        ChatMessageView(id="a2", role="assistant", content="", error="quota"),
        ChatMessageView(id="u3", role="user", content="second"),
        ChatMessageView(id="a3", role="assistant", content="two"),
    ]


def test_a_refused_message_is_not_a_stored_turn() -> None:
    messages = _transcript()
    assert [turn_of(messages, i) for i in ("u1", "u2", "u3", "a1")] == [0, None, 1, None]


def test_edit_keeps_what_came_before_the_turn() -> None:
    messages = _transcript()
    assert [m.id for m in truncated_at_turn(messages, 1)] == ["u1", "a1", "u2", "a2"]
    assert truncated_at_turn(messages, 0) == []
    assert len(truncated_at_turn(messages, 7)) == len(messages)


def test_a_resent_turn_keeps_the_replaced_messages_files_then_the_new_ones() -> None:
    messages = _transcript()
    messages[4].attachments = ["/workspace/uploads/a.csv"]
    added = ["/workspace/uploads/a.csv", "/workspace/uploads/b.csv"]
    assert attachments_at_turn(messages, 1, added) == added
    assert attachments_at_turn(messages, 1, []) == ["/workspace/uploads/a.csv"]
    assert attachments_at_turn(messages, 0, []) == []
    assert attachments_at_turn(messages, 5, ["/workspace/uploads/c.csv"]) == ["/workspace/uploads/c.csv"]


def test_an_edit_may_leave_out_some_of_the_replaced_messages_files() -> None:
    messages = _transcript()
    messages[4].attachments = ["/workspace/uploads/a.csv", "/workspace/uploads/b.csv"]
    keep = ["/workspace/uploads/b.csv"]
    assert attachments_at_turn(messages, 1, [], keep) == keep
    assert attachments_at_turn(messages, 1, ["/workspace/uploads/c.csv"], []) == ["/workspace/uploads/c.csv"]


# --- a refused message survives a reload (tester, round 10: "nothing lost") --------------------


def _unsent(state: Any) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in state.messages if m.unsent]


async def test_a_message_the_quota_refused_comes_back_after_a_reload(
    tabs: tuple[Tab, Tab],  # noqa: F811
    runtime: AgentRuntime,  # noqa: F811
) -> None:
    """Tester: after F5 the message marked 未发送, its Retry and the text in the box were all gone."""
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id
    guard.set_user_quota(runtime.engine, USER, 1)
    await a.fire("send", form_data={"message": "second, over the quota"})
    live = await a.state()
    assert _unsent(live) == [("user", "second, over the quota")]
    refusal = live.messages[-1].error
    assert refusal and live.messages[-1].status == "error"
    a.browser.values.clear()

    await a.fire("load_page")  # a reload: the session is read afresh

    state = await a.state()
    assert _unsent(state) == [("user", "second, over the quota")], "still marked unsent, with Retry"
    assert state.messages[-1].error == refusal, "the refusal's sentence with it"
    assert [m.content for m in state.messages if m.role == "user"] == ["hello", "second, over the quota"]
    assert a.browser.values.get(a.token) == [("ref_chat_input", "second, over the quota")], "back in the box"

    # The server's state of the tab is gone (a restart): the browser's session storage brings it back.
    (await b.state()).unsent_kept = state.unsent_kept  # as Reflex hydrates a client-storage var
    await b.fire("open_session", session_id=session_id)
    assert _unsent(await b.state()) == [("user", "second, over the quota")]
    assert b.browser.values.get(b.token) == [("ref_chat_input", "second, over the quota")]

    guard.set_user_quota(runtime.engine, USER, 10_000_000)
    await b.fire("retry")
    state = await b.state()
    assert not _unsent(state) and not state.unsent_kept, "sent: nothing kept any more"
    assert [m.content for m in state.messages if m.role == "user"] == ["hello", "second, over the quota"]
    await b.fire("load_page")
    assert not _unsent(await b.state())


async def test_a_new_chats_refused_first_message_is_back_in_the_box_after_a_reload(
    tabs: tuple[Tab, Tab],  # noqa: F811
    runtime: AgentRuntime,  # noqa: F811
) -> None:
    a, _ = tabs
    guard.set_user_quota(runtime.engine, USER, 1)
    await a.fire("send", form_data={"message": "hello"})
    await a.fire("send", form_data={"message": "over the quota"})  # the first used it up
    await a.fire("new_chat")
    await a.fire("send", form_data={"message": "a new chat, refused"})
    a.browser.values.clear()

    await a.fire("load_page")

    assert _unsent(await a.state()) == [("user", "a new chat, refused")]
    assert a.browser.values.get(a.token) == [("ref_chat_input", "a new chat, refused")]

    guard.set_user_quota(runtime.engine, USER, 10_000_000)
    await a.fire("open_session", session_id=(await a.state()).sessions[0].id)
    await a.fire("send", form_data={"message": "in another chat"})
    await a.fire("new_chat")
    await a.fire("load_page")
    assert _unsent(await a.state()) == [("user", "a new chat, refused")], (
        "a message elsewhere replaces nothing"
    )


async def test_a_conversation_not_found_shows_a_clean_new_chat_after_a_refusal(
    tabs: tuple[Tab, Tab],  # noqa: F811
    runtime: AgentRuntime,  # noqa: F811
) -> None:
    """Tester (try17, J): after a quota refusal ``/?session=<unknown id>`` said "已为你打开一个新对话"
    but showed the refused message and its error again, its text back in the box."""
    a, _ = tabs
    guard.set_user_quota(runtime.engine, USER, 1)
    await a.fire("send", form_data={"message": "hello"})
    await a.fire("new_chat")
    await a.fire("send", form_data={"message": "a new chat, refused"})
    assert _unsent(await a.state()) == [("user", "a new chat, refused")]
    a.browser.values.clear()

    await a.fire("open_session", session_id="00000000-0000-0000-0000-000000000000")

    state = await a.state()
    assert (state.session_id, state.messages) == ("", []), "a new chat, as the notice says"
    assert not a.browser.values.get(a.token), "nothing put back in the box"
    await a.fire("load_page")  # as 新对话: a reload of "/" still brings the refused message back
    assert _unsent(await a.state()) == [("user", "a new chat, refused")]
