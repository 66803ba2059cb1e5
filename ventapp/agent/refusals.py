"""A request refused before anything runs (:class:`ChatRejected`), and the fixed refusals by catalogue id.

A fixed refusal names its sentence by id (``refusal.*`` in :mod:`ventapp.i18n.en_refusals` and
:mod:`~ventapp.i18n.zh_cn_refusals`) with the values it names: its ``message`` is that sentence in
English (what the API has always answered, kept as the JSON ``detail`` and in logs), and the API
words the JSON ``message`` in the request's ``Accept-Language`` from ``key`` and ``params``
(:func:`ventapp.api.errors.chat_rejected_handler`). The browser UI words refusals by ``code``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ventapp.i18n import t
from ventapp.identity import MAX_USER_NAME_CHARS, NAME_PUNCTUATION, InvalidUserName


class ChatRejected(Exception):
    """Admission refused the request; nothing ran and nothing was saved.

    Attributes:
        status: The HTTP status an API should answer with (400, 404, 409, 422, 429).
        code: A machine-readable code.
        message: A sentence for people, in English (the API's ``detail``).
        retry_after: Seconds to wait before retrying (429), else None.
        details: Extra JSON fields, e.g. the original ``session_id``/``run_id`` of a duplicate.
        key: The catalogue id that words ``message`` in another language (``""``: none; the
            sentence quotes something of its own, e.g. the installed skills).
        params: The values ``key``'s sentence names (e.g. ``{"limit": 128}``).
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        retry_after: int | None = None,
        details: dict[str, Any] | None = None,
        key: str = "",
        params: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.details = details or {}
        self.key = key
        self.params = dict(params or {})


def rejected(
    status: int,
    code: str,
    key: str,
    *,
    retry_after: int | None = None,
    details: dict[str, Any] | None = None,
    **params: object,
) -> ChatRejected:
    """A fixed refusal worded by catalogue id ``key`` (its ``message`` the English sentence).

    Args:
        status: HTTP status (400, 404, 409, 410, 415, 422, 429, 503).
        code: The API's ``code`` (``bad_request``, ``not_found``, ``busy``, ``gone`` …).
        key: A ``refusal.*`` id, the same in both catalogues.
        retry_after: Seconds after which the same request may succeed, or None.
        details: Extra JSON fields of the answer, or None.
        **params: The values the sentence names (plain values: the English one is the ``detail``
            clients already read, so numbers are not grouped per language).

    Returns:
        The exception to raise.
    """
    return ChatRejected(
        status,
        code,
        t(key, "en", **params),
        retry_after=retry_after,
        details=details,
        key=key,
        params=params,
    )


def unknown_route(name: str, names: list[str]) -> ChatRejected:
    """400 ``unknown_model`` for a model route that is not configured; ``models`` lists the configured ones."""
    return rejected(
        400,
        "unknown_model",
        "refusal.unknown_model",
        details={"models": names},
        name=repr(name),
        names=", ".join(names),
    )


def session_not_found() -> ChatRejected:
    """404 ``not_found``: the one answer for a session that is malformed, unknown or another user's."""
    return rejected(404, "not_found", "refusal.session_not_found")


def user_name_refused(refused: InvalidUserName) -> ChatRejected:
    """400 ``bad_request`` for a ``user_name`` that breaks the rule, worded by its ``cause``."""
    if refused.cause == "too_long":
        return rejected(400, "bad_request", "refusal.user_name.too_long", limit=MAX_USER_NAME_CHARS)
    if refused.cause == "unsafe":
        return rejected(
            400,
            "bad_request",
            "refusal.user_name.unsafe",
            punctuation=" ".join(NAME_PUNCTUATION),
            character=repr(refused.character),
        )
    if refused.cause in ("blank", "invisible", "no_letter"):
        return rejected(400, "bad_request", f"refusal.user_name.{refused.cause}")
    return ChatRejected(400, "bad_request", refused.message)
