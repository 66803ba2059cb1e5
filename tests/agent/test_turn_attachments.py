"""Attachments of sent turns read back from the agent's copies (``ventapp.agent.turn_attachments``)."""

from __future__ import annotations

from ventapp.agent.pipeline import ChatRequest, agent_input_text
from ventapp.agent.turn_attachments import attachments_of, match_attachments


def test_the_agent_copy_of_a_turn_names_its_attachments() -> None:
    paths = ["/workspace/uploads/fan.csv", "/workspace/uploads/a, b.txt"]
    text = agent_input_text(ChatRequest(message="read these", attachments=paths[:1], skill="fans"))
    assert attachments_of(text, "read these") == paths[:1]
    assert attachments_of(text, "something else") is None
    assert attachments_of("read these", "read these") == []


def test_stored_messages_match_the_agent_copies_in_order_and_survive_compaction() -> None:
    copies = [
        agent_input_text(ChatRequest(message="second", attachments=["/workspace/uploads/x.csv"])),
        "third",
    ]
    # "first" was compacted away: it gets no chips; the others match in order.
    assert match_attachments(["first", "second", "third"], copies) == [[], ["/workspace/uploads/x.csv"], []]
    assert match_attachments(
        ["same", "same"], ["same", "same\n\nAttached files (read them with read_file): /p"]
    ) == [
        [],
        ["/p"],
    ]
