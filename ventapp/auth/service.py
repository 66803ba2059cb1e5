"""Who is asking: login, logout, password change, sessions, API keys and roles.

Every function is synchronous (database and argon2 work): async callers use ``asyncio.to_thread``.
Expected refusals are :class:`AuthRejected` with an HTTP status, a code and a sentence; the
password itself never reaches a log line, an exception message or a response.
"""

from __future__ import annotations

import ipaddress
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal
from urllib.parse import quote

from sqlalchemy.engine import Engine

from ventapp.agent.identity import MAX_USER_NAME_CHARS, NAME_PUNCTUATION, InvalidUserName, normalize_user_name
from ventapp.agent.refusals import user_name_refused
from ventapp.auth import passwords, tokens
from ventapp.config_auth import AuthSettings
from ventapp.db import auth_store
from ventapp.db.auth_models import ROLES, Account, ApiKey
from ventapp.db.models import iso_utc, utcnow
from ventapp.i18n import formats
from ventapp.refusal import Refusal

logger = logging.getLogger(__name__)

Method = Literal["none", "session", "api_key", "header"]
"""How the caller was identified: stated (``none`` mode), login cookie, API key, proxy header."""
MAX_KEY_NAME_CHARS = 100


@dataclass(frozen=True)
class Caller:
    """An identified caller.

    Attributes:
        name: The canonical user name.
        role: ``user`` or ``operator``.
        method: How the name was established (:data:`Method`).
        session_hash: The login session's token hash when ``method == "session"`` (for logout).
    """

    name: str
    role: str = "user"
    method: Method = "none"
    session_hash: str | None = None

    @property
    def is_operator(self) -> bool:
        """True for the operator role."""
        return self.role == "operator"


class AuthRejected(Refusal):
    """A refused authentication step.

    A :class:`~ventapp.refusal.Refusal`: status 400, 401, 403, 404, 409, 429 or 503; code
    ``unauthenticated``, ``bad_credentials``, ``forged_identity``, ``throttled``, ``weak_password``,
    ``forbidden``, ``not_found``, ``bad_request``, ``conflict``, ``busy`` or ``storage`` (the last
    three a rename's: :mod:`ventapp.auth.rename`); ``message`` never holds the password nor ``str(exc)``;
    ``retry_after`` for 429. The refusals the API answers (401, the login throttle's 429, 403
    ``operator_only``, a bad name, role or password, ``auth_off``, an unknown key) are worded by
    catalogue id (``refusal.auth.*``, a name's ``refusal.user_name.*``), so the API answers their
    ``message`` in the request's ``Accept-Language``; a ``wait`` they name (seconds) reads as a
    duration in each language ("15 minutes" / "15分钟"). A rename's refusals (the command line's,
    :mod:`ventapp.auth.rename`) are worded by catalogue id too (``refusal.rename.*``); the command
    line prints their ``message``, in English, as it does every refusal.
    """

    @classmethod
    def formatted(cls, params: Mapping[str, object], lang: str) -> dict[str, object]:
        """``params`` with a ``wait`` in seconds as a duration people read in ``lang``, and
        ``modes`` (a tuple of ``AUTH_MODE`` values) as "local or header" / "local 或 header"."""
        worded = super().formatted(params, lang)
        wait = params.get("wait")
        if isinstance(wait, int):
            worded["wait"] = formats.wait(wait, lang)
        modes = params.get("modes")
        if isinstance(modes, tuple):
            worded["modes"] = (" or " if lang == "en" else " 或 ").join(str(mode) for mode in modes)
        return worded


def weak_password(weak: passwords.WeakPassword) -> AuthRejected:
    """400 ``weak_password`` for a password that breaks the rule, worded by its catalogue id."""
    if not weak.key:
        return AuthRejected(400, "weak_password", weak.message)
    return AuthRejected.by_key(400, "weak_password", weak.key, limit=weak.limit)


LOGIN_PATH = "/login"


def safe_next(target: str) -> str:
    """Where a login returns to: a path of this site (``/…``, never ``//host`` or a ``\\`` path: no
    open redirect), and never the login page itself (``/login?next=/login`` led back to the form
    after a logout and Back); ``"/"`` otherwise."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    path = target.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return "/" if path == LOGIN_PATH else target


LOGIN_ENDED = "ended"
"""``/login?reason=`` when a login ended under an open page (a logout elsewhere, an expiry, a
password reset): the login page says so."""
LOGGED_OUT = "logged_out"
"""``/login?reason=`` after the user logged out in this very tab (then Back): the page says they
logged out, never that their login ended."""


def login_url(came_from: str, *, reason: str = "") -> str:
    """The login page, returning to ``came_from`` (path and query) afterwards.

    Args:
        came_from: The page being left, e.g. ``"/?session=<id>"``; made safe by :func:`safe_next`.
        reason: Why the page is reached, for its notice: :data:`LOGIN_ENDED` (a login ended under
            that page) or :data:`LOGGED_OUT`; ``""`` adds nothing.

    Returns:
        E.g. ``"/login?next=/%3Fsession%3D<id>&reason=ended"``.
    """
    target = f"{LOGIN_PATH}?next={quote(safe_next(came_from))}"
    return f"{target}&reason={quote(reason)}" if reason else target


def canonical(raw: str) -> str:
    """A stated account name under the identity rule.

    Raises:
        AuthRejected: 400 ``bad_request`` when the name breaks the rule.
    """
    try:
        return normalize_user_name(raw)
    except InvalidUserName as bad:
        raise AuthRejected.passed_on(user_name_refused(bad)) from None


def role_of(engine: Engine, auth: AuthSettings, user_name: str) -> str:
    """The role of ``user_name``: its account's; in ``none`` mode, operator when listed in
    ``AUTH_NONE_OPERATORS``; ``user`` otherwise."""
    if auth.mode == "none":
        return "operator" if user_name in auth.none_operators else "user"
    account = auth_store.get_account(engine, user_name)
    return account.role if account is not None else "user"


def is_trusted_proxy(auth: AuthSettings, address: str | None) -> bool:
    """True when ``address`` (the TCP peer) is in ``AUTH_TRUSTED_PROXIES``."""
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in auth.trusted_proxies)


def proxy_identity(values: list[str], header: str) -> str:
    """The user a proxy's identity header names, or a refusal saying what is wrong with it.

    Args:
        values: Every value of ``AUTH_TRUSTED_HEADER`` in the request, decoded as UTF-8.
        header: The header's name, for the refusal's sentence.

    Returns:
        The canonical user name (the user-name rule of :mod:`ventapp.identity`: letters of any
        script, so ``王工`` is a name).

    Raises:
        AuthRejected: 401 ``unauthenticated`` worded by ``refusal.proxy_user.*``: several values or a
            comma-joined list (a proxy that appends to a client's header instead of replacing it
            would let the client choose), or a name that breaks the rule (which part of it).
    """
    if len(values) != 1 or "," in values[0]:
        raise _proxy_refused("several", header)
    try:
        return normalize_user_name(values[0])
    except InvalidUserName as bad:
        if bad.cause == "too_long":
            raise _proxy_refused("too_long", header, limit=MAX_USER_NAME_CHARS) from None
        if bad.cause == "unsafe":
            raise _proxy_refused(
                "unsafe", header, punctuation=" ".join(NAME_PUNCTUATION), character=repr(bad.character)
            ) from None
        cause = bad.cause if bad.cause in ("blank", "no_letter") else "invisible"
        raise _proxy_refused(cause, header) from None


def proxy_user(values: list[str]) -> str | None:
    """:func:`proxy_identity` without the reason: the name, or None when the header names no one."""
    try:
        return proxy_identity(values, "")
    except AuthRejected:
        return None


def _proxy_refused(cause: str, header: str, **params: object) -> AuthRejected:
    return AuthRejected.by_key(401, "unauthenticated", f"refusal.proxy_user.{cause}", header=header, **params)


# --- login, logout, password ------------------------------------------------------------------


def _locked_for(key: str, engine: Engine) -> int:
    row = auth_store.throttle(engine, key)
    if row is None or row.locked_until is None:
        return 0
    left = (row.locked_until - utcnow()).total_seconds()
    return max(0, math.ceil(left))


def login(
    engine: Engine, auth: AuthSettings, raw_name: str, password: str, address: str
) -> tuple[Caller, str]:
    """Check a name and password and open a login session.

    Throttling: after ``AUTH_LOGIN_MAX_FAILURES`` failures of one account, or
    ``AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS`` from one address, within ``AUTH_LOGIN_WINDOW_S``,
    every try is refused with 429 until the window has passed (a correct password too).

    Args:
        engine: The relational store.
        auth: The ``AUTH_*`` settings.
        raw_name: The name as typed.
        password: The password as typed (never logged).
        address: The client's address (for throttling and the log).

    Returns:
        ``(caller, token)``: the caller and the session token for the cookie.

    Raises:
        AuthRejected: 400 bad name, 401 ``bad_credentials`` (same answer for an unknown account
            and a wrong password), 429 ``throttled`` with ``retry_after``.
    """
    name = canonical(raw_name)
    account_key, address_key = f"account:{name}", f"address:{address}"
    wait = max(_locked_for(account_key, engine), _locked_for(address_key, engine))
    if wait:
        logger.warning("login of %r from %s refused: throttled for %d s", name, address, wait)
        raise AuthRejected.by_key(429, "throttled", "refusal.auth.throttled", retry_after=wait, wait=wait)
    account = auth_store.get_account(engine, name)
    if not passwords.verify_password(account.password_hash if account else None, password):
        auth_store.record_failure(engine, account_key, auth.login_window_s, auth.max_failures_per_account)
        auth_store.record_failure(engine, address_key, auth.login_window_s, auth.max_failures_per_address)
        logger.warning("failed login for %r from %s", name, address)
        raise AuthRejected.by_key(401, "bad_credentials", "refusal.auth.bad_credentials")
    assert account is not None and account.password_hash is not None
    auth_store.clear_failures(engine, account_key)
    if passwords.needs_rehash(account.password_hash):
        auth_store.save_account(engine, name, password_hash=passwords.hash_password(password))
    token = tokens.new_token()
    expires = utcnow() + timedelta(seconds=auth.session_ttl_s)
    auth_store.add_session(engine, tokens.token_hash(token), name, expires)
    logger.info("login of %r from %s", name, address)
    return Caller(name, account.role, "session", tokens.token_hash(token)), token


def session_caller(engine: Engine, token: str) -> Caller | None:
    """The caller of a live login session token, or None (unknown, expired, logged out)."""
    if not token or len(token) > 200:
        return None
    digest = tokens.token_hash(token)
    row = auth_store.live_session(engine, digest)
    if row is None:
        return None
    account = auth_store.get_account(engine, row.user_name)
    if account is None:  # the account was removed: its sessions die with it
        return None
    return Caller(row.user_name, account.role, "session", digest)


def logout(engine: Engine, session_hash: str) -> None:
    """End one login session."""
    auth_store.delete_session(engine, session_hash)


def change_password(engine: Engine, caller: Caller, current: str, new: str) -> None:
    """Replace the caller's password; every other login session of theirs ends.

    Raises:
        AuthRejected: 401 ``bad_credentials`` (current password wrong), 400 ``weak_password``.
    """
    account = auth_store.get_account(engine, caller.name)
    if not passwords.verify_password(account.password_hash if account else None, current):
        logger.warning("password change of %r refused: wrong current password", caller.name)
        raise AuthRejected.by_key(401, "bad_credentials", "refusal.auth.wrong_password")
    try:
        digest = passwords.hash_password(new)
    except passwords.WeakPassword as weak:
        raise weak_password(weak) from None
    auth_store.save_account(engine, caller.name, password_hash=digest)
    ended = auth_store.delete_sessions_of(engine, caller.name, keep=caller.session_hash)
    logger.info("password of %r changed; %d other session(s) ended", caller.name, ended)


def create_account(engine: Engine, raw_name: str, password: str | None, role: str | None = None) -> Account:
    """Create or update an account (the command line's ``create-user``).

    Args:
        engine: The relational store.
        raw_name: The user name as typed.
        password: The new password; None leaves it as it is (a new account then has none).
        role: ``user`` | ``operator``; None keeps an existing account's role (a new one is a user),
            so resetting an operator's password never demotes them.

    Returns:
        The saved account (canonical name, role).

    Raises:
        AuthRejected: 400 for a bad name, role or (``weak_password``) password.

    A new password ends the account's login sessions: whoever held the old one is out.
    """
    name = canonical(raw_name)
    if role is not None and role not in ROLES:
        raise AuthRejected.by_key(400, "bad_request", "refusal.auth.role", roles=", ".join(ROLES))
    digest = None
    if password is not None:
        try:
            digest = passwords.hash_password(password)
        except passwords.WeakPassword as weak:
            raise weak_password(weak) from None
    existing = auth_store.get_account(engine, name)
    if role is None and existing is None:
        role = "user"
    account = auth_store.save_account(engine, name, role=role, password_hash=digest)
    if existing is not None and digest is not None:
        auth_store.delete_sessions_of(engine, name)
    return account


# --- API keys ---------------------------------------------------------------------------------


def create_api_key(engine: Engine, caller: Caller, label: str) -> tuple[ApiKey, str]:
    """A new personal API key of the caller.

    Returns:
        ``(row, plaintext)``; the plaintext exists only in this return value.

    Raises:
        AuthRejected: 400 when ``label`` is longer than 100 characters.
    """
    label = " ".join(label.split())
    if len(label) > MAX_KEY_NAME_CHARS:
        raise AuthRejected.by_key(
            400, "bad_request", "refusal.auth.key_name_too_long", limit=MAX_KEY_NAME_CHARS
        )
    key_id, plaintext = tokens.new_api_key()
    row = auth_store.add_api_key(
        engine, ApiKey(id=key_id, user_name=caller.name, name=label, key_hash=tokens.token_hash(plaintext))
    )
    logger.info("API key %s created for %r", key_id, caller.name)
    return row, plaintext


def api_key_caller(engine: Engine, auth: AuthSettings, token: str) -> Caller | None:
    """The owner of an unrevoked API key, or None."""
    if not tokens.looks_like_api_key(token):
        return None
    row = auth_store.usable_api_key(engine, tokens.token_hash(token))
    if row is None:
        return None
    return Caller(row.user_name, role_of(engine, auth, row.user_name), "api_key")


def key_public(key: ApiKey) -> dict[str, object]:
    """A key as lists show it: ``{id, name, prefix, created_at, last_used_at, revoked_at, active}``."""
    return {
        "id": key.id,
        "name": key.name,
        "prefix": f"{tokens.API_KEY_PREFIX}{key.id}_…",
        "created_at": iso_utc(key.created_at),
        "last_used_at": iso_utc(key.last_used_at),
        "revoked_at": iso_utc(key.revoked_at),
        "active": key.revoked_at is None,
    }
