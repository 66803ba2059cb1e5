"""A request's history shaped for strict chat templates (try16)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from ventapp.agent.request_history import has_adjacent_user_turns, results_in_call_order, user_turns_merged


def _call(call_id: str) -> dict[str, object]:
    return {"name": "calculate", "args": {}, "id": call_id, "type": "tool_call"}


def test_tool_results_follow_the_order_of_their_calls_and_foreign_ones_stay_last() -> None:
    asked = AIMessage(content="", tool_calls=[_call("a"), _call("b"), _call("c")])
    history = [
        HumanMessage("q"),
        asked,
        ToolMessage("c!", tool_call_id="c"),
        ToolMessage("x!", tool_call_id="x"),
        ToolMessage("a!", tool_call_id="a"),
        ToolMessage("b!", tool_call_id="b"),
        HumanMessage("next"),
    ]
    shaped = results_in_call_order(history)
    assert [getattr(m, "tool_call_id", m.content) for m in shaped] == ["q", "", "a", "b", "c", "x", "next"]
    assert [getattr(m, "tool_call_id", None) for m in history[2:6]] == ["c", "x", "a", "b"], "input untouched"


def test_adjacent_user_messages_are_joined_text_with_text_and_blocks_with_blocks() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    history = [
        SystemMessage("sys"),
        HumanMessage("first", id="1"),
        HumanMessage("second", id="2"),
        AIMessage("answer"),
        HumanMessage("look"),
        HumanMessage(content=[image]),
    ]
    assert has_adjacent_user_turns(history)
    shaped = user_turns_merged(history)
    assert [m.type for m in shaped] == ["system", "human", "ai", "human"]
    assert shaped[1].content == "first\n\nsecond" and shaped[1].id == "2"
    assert shaped[3].content == [{"type": "text", "text": "look"}, image]
    assert not has_adjacent_user_turns(shaped)
    assert not has_adjacent_user_turns([HumanMessage("a"), AIMessage("b"), HumanMessage("c")])
