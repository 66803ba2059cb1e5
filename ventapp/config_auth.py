"""The ``AUTH_*`` keys: how the caller's identity is established (issue 15).

Part of the configuration (read only through :mod:`ventapp.config`, which merges these keys into
its table and builds :class:`AuthSettings` with :func:`parse_auth`); a module of its own so that
``config.py`` stays one screenful of concerns.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from ventapp.config_values import as_int
from ventapp.identity import InvalidUserName, normalize_user_name

AUTH_MODES = ("none", "local", "header")
COOKIE_SECURE_CHOICES = ("auto", "1", "0")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

AUTH_KEYS: dict[str, tuple[str, str]] = {
    "AUTH_MODE": (
        "none",
        "Who the caller is: none (user_name as stated; trusted networks and the legacy frontend only) | "
        "local (accounts in the database, login page, API keys) | header (a trusted proxy names the user)",
    ),
    "AUTH_TRUSTED_HEADER": (
        "X-Forwarded-User",
        "header mode: the request header the authenticating proxy puts the user name in",
    ),
    "AUTH_TRUSTED_PROXIES": (
        "",
        "header mode: addresses or CIDRs of that proxy, comma-separated (e.g. 127.0.0.1,10.0.0.0/8); "
        "the header from any other address is refused with 401",
    ),
    "AUTH_NONE_OPERATORS": (
        "",
        "none mode: user names allowed the operator routes (thinking level, reload, others' quotas and "
        "usage), comma-separated, each under the user-name rule (a refused one stops the start-up); trusted "
        "networks only (anyone can state these names)",
    ),
    "AUTH_SESSION_TTL_S": ("604800", "local mode: seconds a login stays valid (default 7 days)"),
    "AUTH_COOKIE_SECURE": (
        "auto",
        "Secure flag of the session cookie: auto (when the request came over HTTPS) | 1 | 0",
    ),
    "AUTH_LOGIN_MAX_FAILURES": (
        "5",
        "local mode: failed logins per account within AUTH_LOGIN_WINDOW_S before further tries get 429",
    ),
    "AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS": (
        "20",
        "local mode: failed logins per client address within AUTH_LOGIN_WINDOW_S before 429",
    ),
    "AUTH_LOGIN_WINDOW_S": (
        "900",
        "local mode: seconds failed logins are counted for, and how long a throttled account or address waits",
    ),
}


@dataclass(frozen=True)
class AuthSettings:
    """The parsed ``AUTH_*`` keys (see :data:`AUTH_KEYS` for each one's meaning).

    Attributes:
        mode: ``none`` | ``local`` | ``header``.
        trusted_header: Header name, as configured (HTTP header names are case-insensitive).
        trusted_proxies: Networks whose requests may carry ``trusted_header``.
        none_operators: Canonical user names that are operators in ``none`` mode.
        session_ttl_s: Lifetime of a login session, seconds.
        cookie_secure: ``auto`` | ``1`` | ``0``.
        max_failures_per_account: Failed logins per account per window before 429.
        max_failures_per_address: Failed logins per client address per window before 429.
        login_window_s: Counting window and wait after throttling, seconds.
    """

    mode: str = "none"
    trusted_header: str = "X-Forwarded-User"
    trusted_proxies: tuple[Network, ...] = ()
    none_operators: frozenset[str] = frozenset()
    session_ttl_s: int = 604800
    cookie_secure: str = "auto"
    max_failures_per_account: int = 5
    max_failures_per_address: int = 20
    login_window_s: int = 900

    @property
    def verified(self) -> bool:
        """True when identities are checked (``local`` or ``header``); False for ``none``."""
        return self.mode != "none"


def _networks(raw: str) -> tuple[Network, ...]:
    networks = []
    for item in raw.split(","):
        text = item.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(
                f"AUTH_TRUSTED_PROXIES takes IP addresses or CIDRs such as 10.0.0.5 or 10.0.0.0/8, got {text!r}"
            ) from None
    return tuple(networks)


def _operator(raw: str) -> str:
    """One ``AUTH_NONE_OPERATORS`` entry under the identity rule of every route.

    Raises:
        ValueError: The entry breaks the rule (it could never be stated by a client); the message
            names the key, the entry and what is wrong with it.
    """
    try:
        return normalize_user_name(raw)
    except InvalidUserName as bad:
        raise ValueError(
            f"AUTH_NONE_OPERATORS holds {raw.strip()!r}, which is not a valid user name: {bad.message} "
            "Fix or remove that entry (names are comma-separated)."
        ) from None


def parse_auth(values: Mapping[str, str]) -> AuthSettings:
    """Build :class:`AuthSettings` from the merged configuration values.

    Names in ``AUTH_NONE_OPERATORS`` follow the identity rule of every route
    (:func:`ventapp.identity.normalize_user_name`): canonical form, and a name the rule refuses
    (e.g. holding ``/``) stops the start-up with a sentence naming it.

    Args:
        values: Key -> raw text for every key of :data:`AUTH_KEYS` (defaults already filled in).

    Raises:
        ValueError: A value is malformed, ``header`` mode has no trusted proxy, or an
            ``AUTH_NONE_OPERATORS`` entry breaks the identity rule; the message names the key to fix.
    """
    mode = values["AUTH_MODE"].lower() or "none"
    if mode not in AUTH_MODES:
        raise ValueError(f"AUTH_MODE must be one of {', '.join(AUTH_MODES)}, got {values['AUTH_MODE']!r}")
    header = values["AUTH_TRUSTED_HEADER"] or AUTH_KEYS["AUTH_TRUSTED_HEADER"][0]
    if not header.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"AUTH_TRUSTED_HEADER must be an HTTP header name, got {header!r}")
    proxies = _networks(values["AUTH_TRUSTED_PROXIES"])
    if mode == "header" and not proxies:
        raise ValueError(
            "AUTH_MODE=header needs AUTH_TRUSTED_PROXIES (the authenticating proxy's addresses): "
            "otherwise anyone could send the header"
        )
    secure = values["AUTH_COOKIE_SECURE"].lower() or "auto"
    if secure in ("true", "yes"):
        secure = "1"
    if secure in ("false", "no"):
        secure = "0"
    if secure not in COOKIE_SECURE_CHOICES:
        raise ValueError(f"AUTH_COOKIE_SECURE must be auto, 1 or 0, got {values['AUTH_COOKIE_SECURE']!r}")
    operators = frozenset(
        _operator(name) for name in values["AUTH_NONE_OPERATORS"].split(",") if name.strip()
    )
    return AuthSettings(
        mode=mode,
        trusted_header=header,
        trusted_proxies=proxies,
        none_operators=operators,
        session_ttl_s=as_int(values, "AUTH_SESSION_TTL_S", 60),
        cookie_secure=secure,
        max_failures_per_account=as_int(values, "AUTH_LOGIN_MAX_FAILURES", 1),
        max_failures_per_address=as_int(values, "AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS", 1),
        login_window_s=as_int(values, "AUTH_LOGIN_WINDOW_S", 1),
    )
