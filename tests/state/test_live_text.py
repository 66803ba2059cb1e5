"""What the browser is sent of the live answer's text (``ventapp.state.live_text``)."""

from __future__ import annotations

from ventapp.state.live_text import text_events


def test_text_events_append_only_what_is_new_at_its_utf16_offset() -> None:
    (add,) = text_events("id1", "Fan 😀 ", "Fan 😀 laws")
    code = add.args[0][1]._var_value
    assert code.endswith('.add("id1",7,"laws")'), "the emoji counts two UTF-16 units, as in JavaScript"
    (put,) = text_events("id1", "", "Fan")
    assert '.put("id1","Fan")' in put.args[0][1]._var_value
    assert text_events("id1", "same", "same") == []
    (replaced,) = text_events("id1", "abc", "xyz")
    assert '.put("id1","xyz")' in replaced.args[0][1]._var_value
