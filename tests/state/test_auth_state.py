"""The login page's state headless (``ventapp.state.auth_state``): what it shows in each ``AUTH_MODE``."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest
from reflex.event import Event
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex.state import State
from reflex_base.event.processor import BaseStateEventProcessor
from reflex_base.utils.format import format_event_handler

from tests.support import patched_env
from ventapp.db.auth_models import ApiKey
from ventapp.i18n import formats
from ventapp.state.auth_state import AuthState, key_view, throttled_sentence
from ventapp.state.views import DISPLAY_TZ


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


def test_an_api_keys_creation_time_is_written_like_every_other_time() -> None:
    """Tester: a key created at 13:47 Beijing time showed ``2026-12-02 05:47`` (naive UTC, another
    format) while the rest of the UI wrote ``2026/12/2 13:47``."""
    row = ApiKey(id="abc", user_name="u", name="ci", key_hash="h", created_at=datetime(2026, 12, 2, 5, 47))
    view = key_view(row, "zh-CN")
    assert view.created == formats.date_time(row.created_at, "zh-CN", DISPLAY_TZ) == "2026/12/2 13:47"
    assert key_view(row, "en").created == "Dec 2, 2026, 13:47"
    assert view.prefix == "va_abc_…" and view.active


def test_a_throttled_login_says_how_long_as_a_duration() -> None:
    """Tester: the throttled login said "请 900 秒后再试"."""
    assert throttled_sentence("900", "zh-CN") == "登录失败次数过多，请15分钟后再试。"
    assert throttled_sentence("900", "en") == "Too many failed logins. Try again in 15 minutes."
    assert throttled_sentence("30", "zh-CN").endswith("请30秒钟后再试。")
    assert "1 minute" in throttled_sentence("", "en"), "a missing or odd retry_after reads as a minute"
