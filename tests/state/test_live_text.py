"""What the browser is sent of the live answer's text and reasoning (``ventapp.state.live_text``)."""

from __future__ import annotations

from ventapp.state.live_text import REASONING, TEXT


def _code(event: object) -> str:
    return event.args[0][1]._var_value  # type: ignore[attr-defined]  # an rx.call_script event spec


def test_text_events_append_only_what_is_new_at_its_utf16_offset() -> None:
    (add,) = TEXT.events("id1", "Fan 😀 ", "Fan 😀 laws")
    assert _code(add).endswith('.add("livetext","id1",7,"laws")'), "the emoji counts two UTF-16 units"
    (put,) = TEXT.events("id1", "", "Fan")
    assert '.put("livetext","id1","Fan")' in _code(put)
    assert TEXT.events("id1", "same", "same") == []
    (replaced,) = TEXT.events("id1", "abc", "xyz")
    assert '.put("livetext","id1","xyz")' in _code(replaced)


def test_reasoning_has_a_buffer_of_its_own_through_the_same_events() -> None:
    (add,) = REASONING.events("id1", "Check the fan.", "Check the fan.\n\nThen the duct.")
    assert _code(add).endswith('.add("livereasoning","id1",14,"\\n\\nThen the duct.")')
    assert "Check the fan" not in _code(add), "an append never carries the earlier reasoning"
    (put,) = REASONING.events("id1", "", "Check")
    assert '.put("livereasoning","id1","Check")' in _code(put)
