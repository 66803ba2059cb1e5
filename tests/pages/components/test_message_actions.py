"""The edit box of a sent question (``ventapp.pages.components.message_actions``), compiled (no browser)."""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.composer import composer
from ventapp.pages.components.enter_sends import enter_sends
from ventapp.pages.components.message_actions import edit_form
from ventapp.state.views import ChatMessageView


def _key_down(compiled: str, box: str) -> str:
    """The ``onKeyDown`` of the textarea named ``box`` in ``compiled`` JSX."""
    start = compiled.index(f'name:"{box}"')
    start = compiled.rindex("jsx(", 0, start)
    handler = compiled.index("onKeyDown:", start)
    return compiled[handler : compiled.index("\n}", handler) + 2]


def test_enter_sends_the_edited_message_as_it_sends_the_chat_box() -> None:
    """Tester: in the edit box Enter added a line; in the chat box it sends (Shift+Enter: a line)."""
    edited = _key_down(str(edit_form(rx.Var("m").to(ChatMessageView))), "edited")
    assert edited == f"onKeyDown:{enter_sends('.edit-send')!s}"
    assert "e.nativeEvent.isComposing" in edited and "e.shiftKey" in edited, "IME and Shift+Enter"
    assert "requestSubmit()" in edited
    chat_box = _key_down(str(composer()), "message")
    assert chat_box == f"onKeyDown:{enter_sends('#send')!s}", "one mechanism for both boxes"
