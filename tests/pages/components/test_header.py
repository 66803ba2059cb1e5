"""The headers' logout (``ventapp.pages.components.header``), compiled to the JSX the browser runs.

Tester: in ``AUTH_MODE=local`` only the chat header could log out (not /usage, /schedules,
/settings, /kb); in ``header`` mode the chat's logout led to a login page that signs straight back in.
"""

from __future__ import annotations

import pytest

from tests.support import patched_env
from ventapp.pages.components.header import page_bar, user_chip
from ventapp.pages.components.lang import t
from ventapp.state.usage_state import UsageState


def _bars() -> dict[str, str]:
    return {
        "chat": str(user_chip()),
        "per-user page": str(page_bar("gauge", t("nav.usage"), UsageState.user_name)),
        "knowledge": str(page_bar("book_open", t("kb.badge"), None, signed_in=True)),
    }


def test_every_signed_in_page_offers_logout_with_local_logins() -> None:
    with patched_env({"AUTH_MODE": "local"}):
        bars = _bars()
        not_found = str(page_bar("compass", t("page.not_found_title"), None))
    assert {name: 'id:"logout"' in jsx for name, jsx in bars.items()} == dict.fromkeys(bars, True)
    assert 'id:"logout"' not in not_found, "a page for anyone signs no one out"


@pytest.mark.parametrize("mode", ["header", "none"])
def test_no_logout_where_the_app_does_not_sign_people_in(mode: str) -> None:
    """``header``: the proxy owns sign-out; ``none``: there is no login."""
    with patched_env({"AUTH_MODE": mode, "AUTH_TRUSTED_PROXIES": "127.0.0.1"}):
        bars = _bars()
    assert not any('id:"logout"' in jsx for jsx in bars.values())
