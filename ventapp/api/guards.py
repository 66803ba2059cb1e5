"""ASGI guards in front of every route, the UI and Reflex's event socket (issue 17, items 1, 2, 11).

:class:`HttpGuard` wraps the whole backend (our API app is Reflex's outer app, so the UI
pages, ``/_event`` and ``/_upload`` pass through it too). Per request, in order:

1. a method outside :data:`KNOWN_METHODS` (``TRACE``, ``CONNECT`` …) → 405;
2. a state-changing request (``POST``/``PUT``/``PATCH``/``DELETE``) or a websocket from a
   browser on another site → 403. "Another site" is an ``Origin`` that is neither the
   app's own (the ``Host`` the request came to, or the UI's port on that host in dev
   mode) nor listed in ``CORS_ORIGINS``; without ``Origin``, a ``Sec-Fetch-Site`` of
   ``cross-site``/``same-site``. Clients that are not browsers send neither and pass —
   identity is self-declared anyway, the guard stops *a user's browser* being ridden;
3. a body over the limit → 413 before it is parsed: at once from ``Content-Length``,
   or as soon as a chunked body passes it (whatever the route had begun is discarded);
4. every HTTP response gets :data:`SECURITY_HEADERS`.

Its refusals are JSON ``{detail, message, code}`` like every API refusal: ``message`` in the
request's ``Accept-Language`` (default zh-CN), ``detail`` English.

CORS itself (which origins may *read* responses) is Reflex's ``CORSMiddleware``, fed
the same ``CORS_ORIGINS`` through ``rxconfig.py`` (exact origins; empty: no CORS headers).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ventapp.i18n import accept_language, t
from ventapp.i18n.formats import file_size, number

KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
BODY_MARGIN_BYTES = 1024 * 1024
"""Allowance over ``UPLOAD_MAX_BYTES`` for the other form fields (a 100,000-character
message is up to 400 KB of UTF-8) and multipart framing."""

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        # Reflex's prerendered pages hydrate through inline <script> blocks, and rx.call_script
        # (the address bar update) runs through eval: both are Reflex's, not user content.
        "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
        # Emotion and Radix inject <style> elements and style attributes at run time.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    )
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "SAMEORIGIN",
}


def _netloc(origin: str) -> str | None:
    """``host[:port]`` of an origin, default ports dropped, lower-case; None if not http(s)."""
    parts = urlsplit(origin.strip().lower())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    default = 443 if parts.scheme == "https" else 80
    return host if port in (None, default) else f"{host}:{port}"


def _host_netloc(host_header: str, scheme: str) -> str | None:
    return _netloc(f"{scheme}://{host_header}") if host_header else None


class OriginPolicy:
    """Which browser origins may change state or open the event socket.

    Args:
        allowed: ``CORS_ORIGINS`` (exact ``scheme://host[:port]``).
        ui_port: The port the UI is served from when it is not the backend's (``reflex run
            --env dev``: UI on 3000, backend on 8000), so the UI on the same host counts as own.
    """

    def __init__(self, allowed: Iterable[str] = (), ui_port: int | None = None) -> None:
        self.allowed = frozenset(origin.strip().lower().rstrip("/") for origin in allowed)
        self.ui_port = ui_port

    def allows(self, origin: str, host_header: str, scheme: str = "http") -> bool:
        """True when ``origin`` is the app's own (same host and port) or listed.

        Args:
            origin: The request's ``Origin`` header (``null`` is never allowed).
            host_header: The request's ``Host`` header.
            scheme: ``http`` or ``https`` (only used to read default ports).
        """
        if origin.strip().lower().rstrip("/") in self.allowed:
            return True
        own = _host_netloc(host_header, scheme)
        theirs = _netloc(origin)
        if own is None or theirs is None:
            return False
        if theirs == own:
            return True
        if self.ui_port is not None:
            hostname = urlsplit(f"{scheme}://{own}").hostname or ""
            host = f"[{hostname}]" if ":" in hostname else hostname
            return theirs == f"{host}:{self.ui_port}"
        return False


def _error(
    scope: Scope, status: int, code: str, key: str, extra: dict[str, str] | None = None, **params: object
) -> list[Message]:
    """The refusal ``key`` as ``{detail, message, code}``: ``message`` in the request's
    ``Accept-Language`` (default zh-CN), ``detail`` English, as every API refusal."""
    lang = accept_language(Headers(scope=scope).get("accept-language"))
    answer = {"detail": t(key, "en", **params), "message": t(key, lang, **params), "code": code}
    return _json(status, answer, extra)


def _json(status: int, answer: dict[str, str], extra: dict[str, str] | None = None) -> list[Message]:
    body = json.dumps(answer, ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(key.encode(), value.encode()) for key, value in (extra or {}).items()]
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": body},
    ]


class _BodyTooLarge(Exception):
    pass


class HttpGuard:
    """The ASGI middleware described in the module docstring.

    Args:
        app: The wrapped ASGI app.
        policy: Which origins count as own or listed.
        max_body_bytes: Largest request body accepted, in bytes.
        upload_max_bytes: ``UPLOAD_MAX_BYTES``, the limit a refusal names to people (a body over
            the limit is, to them, a file over it); None: ``max_body_bytes`` less
            :data:`BODY_MARGIN_BYTES`.
    """

    def __init__(
        self, app: ASGIApp, policy: OriginPolicy, max_body_bytes: int, upload_max_bytes: int | None = None
    ) -> None:
        self.app = app
        self.policy = policy
        self.max_body_bytes = max_body_bytes
        self.upload_max_bytes = (
            max(0, max_body_bytes - BODY_MARGIN_BYTES) if upload_max_bytes is None else upload_max_bytes
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if not self._same_site(scope):
                # Closing before accept makes the server answer the upgrade with 403.
                await send({"type": "websocket.close", "code": 1008, "reason": "cross-site"})
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"].upper()
        if method not in KNOWN_METHODS:
            allow = ", ".join(sorted(KNOWN_METHODS))
            await _send_all(
                send,
                _error(
                    scope, 405, "method_not_allowed", "refusal.guard.method", {"allow": allow}, method=method
                ),
            )
            return
        if method not in SAFE_METHODS and not self._same_site(scope):
            await _send_all(
                send,
                _error(scope, 403, "forbidden", "refusal.guard.cross_site"),
            )
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await _send_all(send, self._too_large(scope))
            return
        await self._limited(scope, receive, send)

    def _same_site(self, scope: Scope) -> bool:
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is not None:
            scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
            return self.policy.allows(origin, headers.get("host", ""), scheme)
        return headers.get("sec-fetch-site", "none") in ("same-origin", "none")

    def _too_large(self, scope: Scope) -> list[Message]:
        # People read the upload limit they were told (the UI's sentence, in MB), not the body
        # limit with its unconfigured margin; the English detail keeps both in bytes.
        lang = accept_language(Headers(scope=scope).get("accept-language"))
        answer = {
            "detail": t(
                "refusal.guard.too_large",
                "en",
                limit=number(self.max_body_bytes, "en"),
                upload=number(self.upload_max_bytes, "en"),
            ),
            "message": t("attach.too_large", lang, max=file_size(self.upload_max_bytes, lang)),
            "code": "too_large",
        }
        return _json(413, answer, {"connection": "close"})

    async def _limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        received = 0
        over = False
        started = False

        async def counting_receive() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    over = True
                    raise _BodyTooLarge
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over and not started:
                return  # the route's answer to a cut-off body is replaced by the 413 below
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": _with_security_headers(message.get("headers", []))}
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except _BodyTooLarge:
            pass
        except Exception:
            if not over:
                raise
        if over and not started:
            await _send_all(send, self._too_large(scope))


def _with_security_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    present = {name.lower() for name, _ in headers}
    extra = [
        (name.encode(), value.encode())
        for name, value in SECURITY_HEADERS.items()
        if name.encode() not in present
    ]
    return [*headers, *extra]


async def _send_all(send: Send, messages: list[Message]) -> None:
    for message in messages:
        if message["type"] == "http.response.start":
            message = {**message, "headers": _with_security_headers(message["headers"])}
        await send(message)
