"""Who is at the keyboard, for the Reflex states (issue 15).

The API decides identity in ``ventapp.api.deps``; the UI's event socket is not an HTTP route, so
the states use this module, built on the same :mod:`ventapp.auth.service`:

* :func:`user_name_var` — the ``user_name`` var of a state: browser-stored (the name dialog) in
  ``AUTH_MODE=none``; in ``local``/``header`` mode a plain var only the server sets, so a browser
  cannot claim another name through its storage.
* :func:`verified_caller` — the caller of an event from the socket's own handshake headers (the
  server's copy, not anything the page sends): the login session cookie (``local``), the proxy's
  header from a trusted proxy (``header``), or the stated name (``none``).
* :func:`role_caller` — a :class:`~ventapp.auth.service.Caller` with the role, for role checks.
* :func:`login_gone` — checked before every action taken as the user: a tab opened before a logout
  or a password reset must not keep acting on the name it was given when its page loaded.
* :func:`to_login` / :func:`restore_draft` — the trip to ``/login`` keeps what the user typed in
  the chat box (this tab's ``sessionStorage``, tagged with the user's name); the first chat page
  after logging in again as that user puts it back, and nobody else ever sees it.
* :func:`submit_login_form` / :func:`restore_login_user` — a refused login keeps the name typed
  on the login form (this tab's ``sessionStorage``); only the password is typed again.
"""

from __future__ import annotations

import asyncio
import json
from http.cookies import CookieError, SimpleCookie
from typing import Any

import reflex as rx

from ventapp.agent.runtime import get_runtime
from ventapp.auth.service import (
    LOGIN_ENDED,
    Caller,
    is_trusted_proxy,
    login_url,
    proxy_user,
    role_of,
    session_caller,
)
from ventapp.config import get_settings
from ventapp.i18n import t
from ventapp.state.drop_confirm import COMPOSER_ID

DRAFT_KEY = "ventagent_chat_draft"
"""``sessionStorage`` key of the chat box's text kept across a trip to ``/login``: ``{user, text}``."""
LOGIN_USER_KEY = "ventagent_login_user"
"""``sessionStorage`` key of the name last typed on the login form: a refused login puts it back
(the form is posted natively, so the page comes back empty otherwise)."""
LOGIN_FORM_ID, LOGIN_USER_ID = "login-form", "login-user"
SESSION_COOKIE = "ventagent_session"
"""Same cookie as the API's (``ventapp.api.deps.SESSION_COOKIE``; the layers keep them apart)."""
STORAGE_NAME = "ventagent_user_name"


def runtime_ready() -> bool:
    """True once the app's runtime (database, agents) is open; False while it starts or stops."""
    try:
        get_runtime()
    except RuntimeError:
        return False
    return True


def verified_mode() -> bool:
    """True when identities are checked (``AUTH_MODE`` local or header)."""
    return get_settings().auth.verified


def logout_offered() -> bool:
    """True when the app signs people out itself (``AUTH_MODE=local``). In ``header`` mode the
    proxy owns sign-in and sign-out: a logout here would only show the login page, whose way
    back signs in again at once."""
    return get_settings().auth.mode == "local"


def none_mode_hint(lang: str) -> str:
    """What to add to an operator-only refusal when identities are not verified ("" otherwise)."""
    return "" if verified_mode() else t("auth.unverified_operators", lang)


def user_name_var() -> Any:
    """The default of a state's ``user_name`` var (see the module docstring)."""
    if verified_mode():
        return ""
    return rx.LocalStorage("", name=STORAGE_NAME, sync=True)


def _cookie(raw: str) -> str:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except CookieError:
        return ""
    morsel = jar.get(SESSION_COOKIE)
    return morsel.value if morsel is not None else ""


def _verify(headers: dict[str, str], peer: str) -> Caller | None:
    """Blocking (database): the caller of a socket with these handshake headers, or None."""
    settings = get_settings()
    runtime = get_runtime()
    auth = settings.auth
    if auth.mode == "header":
        value = headers.get(auth.trusted_header.lower())
        name = proxy_user([value]) if value is not None else None
        if name is None or not is_trusted_proxy(auth, peer):
            return None
        return Caller(name, role_of(runtime.engine, auth, name), "header")
    return session_caller(runtime.engine, _cookie(headers.get("cookie", "")))


async def verified_caller(state: rx.State) -> Caller | None:
    """The verified caller of the event being processed (``local``/``header``), or None.

    Reads the websocket handshake's headers that Reflex keeps server-side; ``None`` when the
    cookie is missing, expired or logged out, or the runtime is not ready.
    """
    headers = {key.lower(): value for key, value in state.router.headers.raw_headers.items()}
    peer = headers.get("asgi-scope-client", "") or state.router.session.client_ip
    try:
        return await asyncio.to_thread(_verify, headers, peer)
    except RuntimeError:
        return None


async def role_caller(name: str) -> Caller:
    """``name`` (already verified, or stated in ``none`` mode) with its role."""
    settings = get_settings()
    try:
        engine = get_runtime().engine
    except RuntimeError:
        return Caller(name, "user", "none")
    role = await asyncio.to_thread(role_of, engine, settings.auth, name)
    return Caller(name, role, "none" if not settings.auth.verified else "session")


async def login_gone(state: rx.State, user_name: str) -> bool:
    """True when identities are verified and the socket's login no longer names ``user_name``.

    Called before every action a state takes as the user (admitting a turn, a card's answer, a
    session change): a logout in another tab, or a password reset (``create-user``), ends the
    login session on the server, and a tab already open has to lose its identity with it. Costs
    the same indexed reads as :func:`verified_caller` (the session row, its account); always
    False in ``AUTH_MODE=none``.

    Args:
        state: The state processing the event (its socket's handshake headers are read).
        user_name: The name the state acts as.
    """
    if not verified_mode():
        return False
    caller = await verified_caller(state)
    return caller is None or caller.name != user_name


def came_from(state: rx.State) -> str:
    """The page of the event being processed, path and query (``"/?session=<id>"``): where a
    login sends the user back to. The browser sends its live address with every event, so a
    conversation opened after the page loaded is in it."""
    url = state.router.url
    return (url.path or "/") + (f"?{url.query}" if url.query else "")


def had_login(state: rx.State) -> bool:
    """True when the socket's handshake carried a session cookie (valid or not): a login page
    reached without a valid one then says the login ended, not just "log in"."""
    headers = {key.lower(): value for key, value in state.router.headers.raw_headers.items()}
    return bool(_cookie(headers.get("cookie", "")))


def to_login(back: str = "/", user_name: str = "", draft: str | None = None) -> Any:
    """The event(s) sending a tab whose login ended to the login page, keeping its draft.

    The login page says the login ended and, once logged in again, returns to ``back``.

    Args:
        back: The page to return to (:func:`came_from` of the refused event).
        user_name: Whose login ended; without it nothing is kept (a draft must never reach
            another user logging in on this tab).
        draft: The text to keep (a message refused because the login ended); None keeps what
            the chat box holds, if this page has one.
    """
    login = rx.redirect(login_url(back, reason=LOGIN_ENDED))
    if not user_name:
        return login
    keep = f"""(() => {{ try {{
  const box = document.getElementById({json.dumps(COMPOSER_ID)});
  const text = {json.dumps(draft)} ?? (box ? box.value : "");
  if (text && text.trim()) sessionStorage.setItem({json.dumps(DRAFT_KEY)},
    JSON.stringify({{user: {json.dumps(user_name)}, text}}));
}} catch (_) {{}} }})()"""
    return [rx.call_script(keep), login]


def restore_draft(user_name: str) -> Any:
    """Put a draft kept by :func:`to_login` back into an empty chat box, for the same user only.

    On a page without the chat box the draft waits; on the chat page it is used up either way
    (someone else's is dropped).
    """
    return rx.call_script(
        f"""(() => {{ try {{
  const raw = sessionStorage.getItem({json.dumps(DRAFT_KEY)});
  const box = document.getElementById({json.dumps(COMPOSER_ID)});
  if (!raw || !box) return;
  sessionStorage.removeItem({json.dumps(DRAFT_KEY)});
  const kept = JSON.parse(raw);
  if (!kept || kept.user !== {json.dumps(user_name)} || box.value) return;
  const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set;
  setter.call(box, String(kept.text));
  box.dispatchEvent(new Event("input", {{bubbles: true}}));
}} catch (_) {{}} }})()"""
    )


def submit_login_form() -> str:
    """The login form's submit script: remember the typed name in this tab, then post the form
    natively (the server's cookie and redirect reach the browser, never a script)."""
    return f"""(() => {{
  const form = document.getElementById({json.dumps(LOGIN_FORM_ID)});
  try {{ sessionStorage.setItem({json.dumps(LOGIN_USER_KEY)}, form.elements.user_name.value); }} catch (_) {{}}
  form.submit();
}})()"""


def restore_login_user() -> Any:
    """After a refused login: the name typed before back in the (empty) user-name field, and the
    cursor in the password field — only the password has to be typed again."""
    return rx.call_script(
        f"""(() => {{ try {{
  const name = sessionStorage.getItem({json.dumps(LOGIN_USER_KEY)});
  const box = document.getElementById({json.dumps(LOGIN_USER_ID)});
  if (!name || !box || box.value) return;
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  setter.call(box, name);
  box.dispatchEvent(new Event("input", {{bubbles: true}}));
  document.getElementById("login-password")?.focus();
}} catch (_) {{}} }})()"""
    )
