"""The composer's markup (``ventapp.pages.components.composer``), compiled to the JSX the browser runs."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from ventapp.pages.components.composer import composer
from ventapp.pages.components.session_bar import attach_upload
from ventapp.state.chat_state import ChatState
from ventapp.state.sessions_state import SessionsState


def test_sending_clears_a_refused_files_sentence() -> None:
    """Tester: the over-size attachment's error stayed under the box after another message was sent."""
    (submit,) = [hook for hook in composer()._get_all_hooks() if "handleSubmit" in hook]
    assert f'{ChatState.get_full_name()}.send"' in submit
    assert f'{ChatState.get_full_name()}.sent"' in submit


def test_the_sent_event_forgets_the_error() -> None:
    state = ChatState(_reflex_internal_init=True)  # type: ignore[call-arg]
    state.upload_error = "无法附加这个文件（文件是空的）。"
    state.sent({"message": "next"})
    assert state.upload_error == ""


@pytest.mark.parametrize("zone", [composer, attach_upload], ids=["composer-drop", "attach"])
def test_an_upload_zone_refuses_a_file_over_the_limit_before_sending_it(zone: Callable[[], Any]) -> None:
    """Tester: a file over ~21 MiB vanished (the server answered 413 to ``/_upload``, Reflex said nothing)."""
    hooks = zone()._get_all_hooks()
    (dropzone,) = [hook for hook in hooks if "useDropzone(" in hook]
    assert re.search(r'\["maxSize"\] : \S*chat_state\.upload_max_bytes', dropzone), "the server's limit"
    (rejected,) = [hook for hook in hooks if hook.startswith("const on_drop_rejected_")]
    assert f'{SessionsState.get_full_name()}.refuse_drop"' in rejected
    # Only the codes: a File in the payload is sent over the websocket whole (25 MiB: dropped).
    assert '["codes"] : (_ev_0).flatMap((r) => (r.errors || []).map((e) => e.code))' in rejected


@pytest.mark.parametrize("zone", [composer, attach_upload], ids=["composer-drop", "attach"])
def test_a_drop_forgets_the_last_refusal_before_its_own_refusal_is_said(zone: Callable[[], Any]) -> None:
    """Tester (try17, B): the upload cleared ``refuse_drop``'s sentence of the same drop; the
    clearing is now the drop's first event, sent before ``on_drop_rejected``'s."""
    (dropped,) = [
        hook
        for hook in zone()._get_all_hooks()
        if hook.startswith("const on_drop_") and "rejected" not in hook.split("=")[0]
    ]
    name = SessionsState.get_full_name()
    assert dropped.index(f'{name}.drop_started"') < dropped.index(f'{name}.handle_upload"')


def test_a_refused_files_sentence_is_said_to_screen_readers() -> None:
    """Tester (try17, D): the ``#announcer`` region stayed empty; the line is an alert, as other errors."""
    from ventapp.pages.components.session_bar import session_bar

    assert 'className:"upload-error",color:"red",role:"alert"' in str(session_bar())
