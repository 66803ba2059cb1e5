"""The UI's side of identity (issue 15): the login check of every page, logout, and API keys.

``check_login`` runs first in each per-user page's ``on_mount``. In ``AUTH_MODE`` local/header
it verifies the caller from the socket's handshake (the session cookie the API set, or the proxy's
header: :mod:`ventapp.state.ui_identity`) against the database and hands the verified name to
every state that has a ``user_name``; without a valid identity it clears them, the open
conversation included, and sends the browser to ``/login``. While the runtime is still starting
nobody can be verified yet, and that is not a logout: the check says "starting" and waits for it
(up to :data:`STARTUP_WAIT_S`), then verifies as usual. ``logout`` ends the server-side session
first, so the cookie left in the browser is worthless, then clears the states the same way: the
back button finds nothing to show.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import reflex as rx

from ventapp.agent.runtime import get_runtime
from ventapp.auth import service
from ventapp.auth.service import AuthRejected
from ventapp.config import get_settings
from ventapp.db import auth_store
from ventapp.i18n import DEFAULT_LANG, formats, resolve_lang, t
from ventapp.state.chat_state import ChatState
from ventapp.state.lang_state import ui_lang
from ventapp.state.schedules_state import HandoffState, SchedulesState
from ventapp.state.settings_state import SettingsState
from ventapp.state.ui_identity import (
    came_from,
    had_login,
    restore_draft,
    restore_login_user,
    runtime_ready,
    verified_caller,
    verified_mode,
)
from ventapp.state.usage_state import UsageState
from ventapp.state.views import DISPLAY_TZ

logger = logging.getLogger(__name__)

USER_STATES: tuple[type[rx.State], ...] = (ChatState, UsageState, SettingsState, SchedulesState, HandoffState)
"""Every state that holds a ``user_name`` (set from the verified caller, cleared on logout)."""
LOGIN_ERRORS = {"bad_credentials", "throttled", "auth_off", "bad_request", "starting"}
STARTUP_WAIT_S = 60.0
"""How long a page's login check waits for a starting runtime before it gives up (still "starting",
never a redirect to ``/login``: the login there would fail the same way)."""
_STARTUP_POLL_S = 0.25


@dataclass
class KeyView:
    """One API key as the settings page lists it."""

    id: str
    name: str
    prefix: str
    created: str
    active: bool


def key_view(row: Any, lang: str = DEFAULT_LANG) -> KeyView:
    """A stored :class:`~ventapp.db.auth_models.ApiKey` as a list row, its creation time written
    like every other time of the UI (Beijing time, per language), not naive UTC."""
    return KeyView(
        row.id,
        row.name,
        f"va_{row.id}_…",
        formats.date_time(row.created_at, lang, DISPLAY_TZ),
        row.revoked_at is None,
    )


def throttled_sentence(retry_after: str, lang: str = DEFAULT_LANG) -> str:
    """The login page's 429 sentence: ``retry_after`` (seconds, from the redirect's query; a minute
    when missing) as a duration people read, e.g. "请15分钟后再试", never "请 900 秒后再试"."""
    seconds = int(retry_after) if retry_after.isdigit() else 60
    return t("auth.error.throttled", lang, wait=formats.wait(seconds, lang))


class AuthState(rx.State):
    """Who is signed in, for the header's chip and logout button and the settings page's keys."""

    signed_in_as: str = ""
    role: str = ""
    login_error: str = ""
    login_notice: str = ""
    """Why the login page was reached: a login ended under an open page (``?reason=ended``), or this
    tab logged out (``?reason=logged_out``)."""
    next_path: str = "/"
    login_mode: str = "local"
    """``AUTH_MODE`` as the login page last read it: the form only for ``local``; ``header`` says the
    proxy signs people in, ``none`` that this server has no accounts."""
    keys: list[KeyView] = []
    new_key: str = ""
    """The key just created, shown once; cleared on the next action or page load."""
    keys_note: str = ""
    starting: bool = False
    """The server is still starting: identities cannot be checked yet (the pages say so)."""
    _logged_out: bool = False
    """This tab logged out (until its next login): Back to a page then says "you logged out",
    not "your login ended". Per tab, like all state: another tab of the same browser, whose
    login did end elsewhere, still says so."""

    async def _forget(self) -> None:
        """Clear every per-user state, the open conversation included."""
        self.signed_in_as = self.role = self.new_key = ""
        self.keys = []
        for state_cls in USER_STATES:
            state = await self.get_state(state_cls)
            if state_cls is ChatState:
                state.reset()
            state.user_name = ""  # type: ignore[attr-defined]  # every USER_STATES class has it

    @rx.event
    async def check_login(self) -> AsyncIterator[rx.event.EventSpec | None]:
        """First of every per-user page's ``on_mount``: the verified name, or to ``/login``.

        A runtime still starting is waited for (the page shows "starting"; the page's next
        ``on_mount`` events run after this one), never taken for a logged-out browser.
        """
        if not verified_mode():
            return
        if not runtime_ready():
            self.starting = True
            yield None
            waited = 0.0
            while not runtime_ready():
                if waited >= STARTUP_WAIT_S:
                    return  # still starting: keep saying so; a reload checks again
                await asyncio.sleep(_STARTUP_POLL_S)
                waited += _STARTUP_POLL_S
            self.starting = False
        caller = await verified_caller(self)
        if caller is None:
            await self._forget()
            # Path and query: ``/?session=<id>`` must reopen that conversation after the login.
            reason = (
                service.LOGGED_OUT if self._logged_out else service.LOGIN_ENDED if had_login(self) else ""
            )
            yield rx.redirect(service.login_url(came_from(self), reason=reason))
            return
        self.signed_in_as, self.role, self._logged_out = caller.name, caller.role, False
        for state_cls in USER_STATES:
            state = await self.get_state(state_cls)
            if state.user_name != caller.name:  # type: ignore[attr-defined]
                state.user_name = caller.name  # type: ignore[attr-defined]
        yield restore_draft(caller.name)

    @rx.event
    async def logout(self) -> rx.event.EventSpec:
        """End the login session on the server, forget everything shown, go to the login page."""
        caller = await verified_caller(self)
        if caller is not None and caller.session_hash is not None:
            await asyncio.to_thread(service.logout, get_runtime().engine, caller.session_hash)
            logger.info("logout of %r from the UI", caller.name)
        await self._forget()
        self._logged_out = True
        return rx.redirect(f"{service.LOGIN_PATH}?reason={service.LOGGED_OUT}")

    @rx.event
    async def load_login(self) -> rx.event.EventSpec | None:
        """The login page: the error code and the page to return to, from the query string; after
        a refused login, the name typed before back in its field."""
        query = self.router.url.query_parameters
        self.next_path = service.safe_next(str(query.get("next", "/")))
        self.login_mode = get_settings().auth.mode
        self.starting = not runtime_ready()
        self._word_login_error(await ui_lang(self))
        return restore_login_user() if self.login_error else None

    @rx.event
    def relocalise_login(self, lang: str) -> None:
        """After the login page's language switch: the error in the new language."""
        self._word_login_error(resolve_lang(lang))

    def _word_login_error(self, lang: str) -> None:
        query = self.router.url.query_parameters
        code = str(query.get("error", ""))
        reason = str(query.get("reason", "")) if self.login_mode == "local" and not code else ""
        notices = {service.LOGIN_ENDED: "auth.notice.ended", service.LOGGED_OUT: "auth.notice.logged_out"}
        self.login_notice = t(notices[reason], lang) if reason in notices else ""
        if self.login_mode != "local":
            self.login_error = ""  # the page says how sign-in works here instead of showing a form
        elif code == "throttled":
            self.login_error = throttled_sentence(str(query.get("retry_after", "")), lang)
        elif code:
            self.login_error = t(f"auth.error.{code}" if code in LOGIN_ERRORS else "auth.error.other", lang)
        else:
            self.login_error = ""

    # --- API keys on the settings page ----------------------------------------------------------

    async def _lang(self) -> str:
        try:
            return await ui_lang(self)
        except Exception:
            return DEFAULT_LANG

    @rx.event
    async def load_keys(self) -> None:
        """The signed-in user's API keys (``local``/``header`` mode only)."""
        self.new_key = self.keys_note = ""
        caller = await verified_caller(self) if verified_mode() else None
        if caller is None:
            self.keys = []
            return
        rows = await asyncio.to_thread(auth_store.list_api_keys, get_runtime().engine, caller.name)
        lang = await self._lang()
        self.keys = [key_view(row, lang) for row in rows]

    @rx.event
    async def create_key(self, form_data: dict[str, str]) -> None:
        """Create a key named by the form's ``name`` and show it once."""
        caller = await verified_caller(self) if verified_mode() else None
        if caller is None:
            self.keys_note = t("auth.keys_off", await self._lang())
            return
        try:
            _row, plaintext = await asyncio.to_thread(
                service.create_api_key, get_runtime().engine, caller, str(form_data.get("name") or "")
            )
        except AuthRejected:
            self.keys_note = t("auth.keys_failed", await self._lang())
            return
        await self.load_keys()
        self.new_key = plaintext

    @rx.event
    async def revoke_key(self, key_id: str) -> None:
        """Revoke one of the signed-in user's keys."""
        caller = await verified_caller(self) if verified_mode() else None
        if caller is None:
            return
        await asyncio.to_thread(auth_store.revoke_api_key, get_runtime().engine, caller.name, key_id)
        await self.load_keys()
