"""A request refused before anything runs (:class:`ChatRejected`), and the fixed refusals by catalogue id.

A fixed refusal names its sentence by id (``refusal.*`` in :mod:`ventapp.i18n.en_refusals` and
:mod:`~ventapp.i18n.zh_cn_refusals`) with the values it names: its ``message`` is that sentence in
English (what the API has always answered, kept as the JSON ``detail`` and in logs), and the API
words the JSON ``message`` in the request's ``Accept-Language`` from ``key`` and ``params``
(:func:`ventapp.api.errors.chat_rejected_handler`). The browser UI words refusals by ``code``.
"""

from __future__ import annotations

from ventapp.identity import MAX_USER_NAME_CHARS, NAME_PUNCTUATION, InvalidUserName
from ventapp.refusal import Refusal


class ChatRejected(Refusal):
    """Admission refused the request; nothing ran and nothing was saved.

    A :class:`~ventapp.refusal.Refusal` (status 400, 404, 409, 422, 429 …); ``key`` is ``""`` when
    the sentence quotes something of its own (e.g. the installed skills).
    """


rejected = ChatRejected.by_key
"""A fixed admission refusal worded by catalogue id: ``rejected(status, code, key, *, retry_after,
details, **params)`` (:meth:`~ventapp.refusal.Refusal.by_key`); ``key`` a ``refusal.*`` id."""


def unknown_route(name: str, names: list[str]) -> ChatRejected:
    """400 ``unknown_model`` for a model route that is not configured; ``models`` lists the configured ones."""
    return rejected(
        400,
        "unknown_model",
        "refusal.unknown_model",
        details={"models": names},
        name=repr(name),
        names=tuple(names),  # listed as the refusal's language lists names
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
