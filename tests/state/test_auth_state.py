"""The login page's state headless (``ventapp.state.auth_state``): what it shows in each ``AUTH_MODE``."""

from __future__ import annotations

import uuid

import pytest
from reflex.event import Event
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex.state import State
from reflex_base.event.processor import BaseStateEventProcessor
from reflex_base.utils.format import format_event_handler

from tests.support import patched_env
from ventapp.state.auth_state import AuthState


async def _login_page() -> AuthState:
    processor = BaseStateEventProcessor().configure(state_manager=StateManagerMemory())
    async with processor:
        token = uuid.uuid4().hex
        event = Event(
            name=format_event_handler(AuthState.event_handlers["load_login"]),
            payload={},
        )
        async for _ in processor.enqueue_stream_delta(token, event):
            pass
        root = await processor._root_context.state_manager.get_state(BaseStateToken(ident=token, cls=State))  # type: ignore[union-attr]
        return await root.get_state(AuthState)


@pytest.mark.parametrize("mode", ["local", "header", "none"])
async def test_the_login_page_offers_a_form_only_with_accounts(mode: str) -> None:
    with patched_env({"AUTH_MODE": mode, "AUTH_TRUSTED_PROXIES": "127.0.0.1"}):
        state = await _login_page()

    assert state.login_mode == mode, "header: the proxy signs people in (a sentence, no form)"
    assert state.login_error == "", "the page's sentence says it; no error callout above it"
