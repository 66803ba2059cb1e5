"""Server URLs in the settings (``DATABASE_URL``, ``CHECKPOINT_URL``, ``REDIS_URL``, endpoints):
checked at start, and shown without their password.

Two mistakes used to surface only as long tracebacks from the database driver when the server
first connected: a password holding an unescaped ``@`` (the driver then reads the rest of the
password as the host and prints it: ``failed to resolve host 't2@127.0.0.1'``), and a port that
is not a number from 1 to 65535. :func:`check_server_url` refuses both while the settings load,
naming the key and never the value. A server that is simply not there is worded by
:func:`unreachable` in one line when the app first connects.

URL syntax: RFC 3986 §3.2 (the authority is ``userinfo@host:port``; an ``@`` inside the
userinfo must be percent-encoded as ``%40``).
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit


def check_server_url(key: str, url: str) -> None:
    """Refuse a server URL whose password holds a raw ``@`` or whose port is not 1–65535.

    URLs without an authority part (``sqlite:///path``, empty) pass.

    Args:
        key: The setting that holds it (named in the message).
        url: Its value (never repeated in the message: it may hold a password).

    Raises:
        ValueError: The message names ``key`` and what to fix.
    """
    if "://" not in url:
        return
    authority = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if authority.count("@") > 1:
        raise ValueError(
            f"{key}: the user name or password holds an '@' — write it as %40 "
            "(e.g. postgresql://vent:p%40ss@db.example:5432/vent)"
        )
    try:
        port = urlsplit(url).port
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError(f"{key}: the port must be a number from 1 to 65535")


def shown_url(url: str) -> str:
    """``url`` as it may be printed: the password, query and fragment left out (user name kept)."""
    parts = urlsplit(url)
    if not parts.netloc:  # sqlite:///path: no server, so no password
        return url
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal goes back into brackets
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def unreachable(key: str, url: str, error: BaseException) -> str:
    """One line for a server the app could not connect to at start.

    Args:
        key: The setting that names the server (``DATABASE_URL`` …).
        url: Its value (shown without the password, :func:`shown_url`).
        error: What the driver raised; its first line is quoted with the password taken out.

    Returns:
        ``"DATABASE_URL: could not connect to postgresql://vent@127.0.0.1:5999/vent (…). Is the
        server running, and are the host, port, user and password right?"``
    """
    reason = str(getattr(error, "orig", None) or error).strip().splitlines()
    first = reason[0].strip() if reason else type(error).__name__
    password = urlsplit(url).password if "://" in url else None
    for secret in {password, unquote(password)} if password else ():  # as written, and decoded
        first = first.replace(secret, "***")
    return (
        f"{key}: could not connect to {shown_url(url)} ({first}). "
        "Is the server running, and are the host, port, user and password right?"
    )
