"""The composer's markup (``ventapp.pages.components.composer``), compiled to the JSX the browser runs."""

from __future__ import annotations

from ventapp.pages.components.composer import composer
from ventapp.state.chat_state import ChatState
from ventapp.state.sessions_state import SessionsState


def test_sending_clears_a_refused_files_sentence() -> None:
    """Tester: the over-size attachment's error stayed under the box after another message was sent."""
    (submit,) = [hook for hook in composer()._get_all_hooks() if "handleSubmit" in hook]
    assert f'{ChatState.get_full_name()}.send"' in submit
    assert f'{SessionsState.get_full_name()}.sent"' in submit


def test_the_sent_event_forgets_the_error() -> None:
    state = SessionsState(_reflex_internal_init=True)  # type: ignore[call-arg]
    state.upload_error = "无法附加这个文件（文件是空的）。"
    state.sent({"message": "next"})
    assert state.upload_error == ""
