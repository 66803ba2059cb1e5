"""The one shape of a refused request: :class:`Refusal` (status, code, sentence, when to retry).

Every layer refuses this way — billing (:class:`~ventapp.billing.guard.BillingRejected`), uploads
(:class:`~ventapp.agent.uploads.UploadRejected`), admission
(:class:`~ventapp.agent.refusals.ChatRejected` and its
:class:`~ventapp.scheduler.rules.ScheduleRejected`), authentication
(:class:`~ventapp.auth.service.AuthRejected`) — so it sits below them all; it imports only the
message catalogue (:mod:`ventapp.i18n`). The API answers each as
``{detail, message, code[, retry_after]}`` (:mod:`ventapp.api.errors`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from ventapp.i18n import formats, t


class Refusal(Exception):
    """A request refused before anything ran or changed.

    Args:
        status: The HTTP status an API answers with (400, 401, 403, 404, 409, 413, 422, 429, 503).
        code: A machine-readable code (``bad_request``, ``quota``, ``busy`` …).
        message: A sentence for people, in English (the API's ``detail``; never ``str(exc)`` of a cause).
        retry_after: Seconds after which the same request may succeed, else None.
        details: Extra JSON fields of the answer (e.g. a duplicate's ``session_id``/``run_id``).
        key: The catalogue id that words ``message`` in another language (``""``: none).
        params: The values ``key``'s sentence names (e.g. ``{"limit": 128}``).

    Attributes:
        status, code, message, retry_after, details, key, params: As given (``details`` and
            ``params`` are empty dicts when not given).
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

    @classmethod
    def passed_on(cls, refused: Refusal) -> Self:
        """Another layer's refusal (billing's, an upload's, a user name's) as this class's, every
        field kept (so its catalogue id still words ``message``)."""
        return cls(
            refused.status,
            refused.code,
            refused.message,
            retry_after=refused.retry_after,
            details=refused.details,
            key=refused.key,
            params=refused.params,
        )

    @classmethod
    def by_key(
        cls,
        status: int,
        code: str,
        key: str,
        *,
        retry_after: int | None = None,
        details: dict[str, Any] | None = None,
        **params: object,
    ) -> Self:
        """A refusal worded by catalogue id ``key``: its ``message`` is that sentence in English.

        Args:
            status: HTTP status.
            code: The API's ``code``.
            key: A catalogue id (``refusal.*``), the same in every language.
            retry_after: Seconds after which the same request may succeed, or None.
            details: Extra JSON fields of the answer, or None.
            **params: The values the sentence names, as plain values (the English ``detail`` and
                every ``message`` word them: :meth:`formatted`, e.g. ``4,000``).

        Returns:
            The exception to raise.
        """
        return cls(
            status,
            code,
            t(key, "en", **cls.formatted(params, "en")),
            retry_after=retry_after,
            details=details,
            key=key,
            params=params,
        )

    @classmethod
    def formatted(cls, params: Mapping[str, object], lang: str) -> dict[str, object]:
        """``params`` as ``key``'s sentence in ``lang`` names them: as given, except a tuple or list
        of names, listed as ``lang`` lists them (``"a、b"`` / ``"a, b"``: :func:`formats.names`), a
        :class:`~ventapp.i18n.formats.FileSize` in KB/MB (:func:`formats.file_size`), and a whole
        number grouped as ``lang`` writes it (``100,000``: :func:`formats.number`); a
        subclass whose sentences name something else per language (a wait as "15 minutes" /
        "15分钟") formats it.

        Args:
            params: The refusal's ``params``.
            lang: ``"zh-CN"`` or ``"en"``.

        Returns:
            Placeholder -> value for :func:`~ventapp.i18n.t`.
        """
        return {name: _worded_value(value, lang) for name, value in params.items()}

    def worded(self, lang: str) -> str:
        """The refusal's sentence in ``lang``: ``key``'s catalogue sentence, or ``message`` (English)
        for a refusal without one (it quotes something of its own).

        Args:
            lang: ``"zh-CN"`` or ``"en"``.

        Returns:
            The sentence the API answers as ``message``.
        """
        if not self.key:
            return self.message
        return t(self.key, lang, **self.formatted(self.params, lang))


def _worded_value(value: object, lang: str) -> object:
    """One param as a sentence in ``lang`` names it (see :meth:`Refusal.formatted`)."""
    if isinstance(value, (tuple, list)):
        return formats.names(map(str, value), lang)
    if isinstance(value, formats.FileSize):  # before int: it is one
        return formats.file_size(value, lang)
    if isinstance(value, int) and not isinstance(value, bool):  # a count or a limit: "100000" read badly
        return formats.number(value, lang)
    return value
