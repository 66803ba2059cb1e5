"""Which stored turn a bubble is, and the transcript an edit or regenerate starts from (``chat_controls``)."""

from __future__ import annotations

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
