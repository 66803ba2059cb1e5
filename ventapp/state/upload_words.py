"""Why an attachment was refused, kept in no language so that a language switch words it anew.

The chat page shows the sentence under the composer (``ChatState.upload_error``); the header's
language switch (:meth:`~ventapp.state.server_view.ServerView.relocalise`) says it again from
the :class:`UploadProblem` kept beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ventapp.agent.uploads import UploadRejected
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.i18n.formats import file_size

TOO_LARGE = "attach.too_large"


@dataclass(frozen=True)
class UploadProblem:
    """A refused attachment's sentence as a catalogue id and its fields.

    ``key``: the sentence (``""``: none); ``params``: its fields; ``limit_bytes``: the upload
    limit, worded as ``max`` in the language's KB/MB (:func:`~ventapp.i18n.formats.file_size`);
    ``reason_key``/``reason_params``: a reason worded into ``{reason}`` without its full stop.
    """

    key: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    limit_bytes: int = 0
    reason_key: str = ""
    reason_params: dict[str, Any] = field(default_factory=dict)

    def words(self, lang: str = DEFAULT_LANG) -> str:
        """The sentence in ``lang`` (``""`` when there is none)."""
        if not self.key:
            return ""
        fields = dict(self.params)
        if self.limit_bytes:
            fields["max"] = file_size(self.limit_bytes, lang)
        if self.reason_key:
            # The reason is a sentence of its own; inside the parentheses it loses its full stop.
            fields["reason"] = t(self.reason_key, lang, **self.reason_params).rstrip("。.")
        return t(self.key, lang, **fields)


def too_large(limit_bytes: int) -> UploadProblem:
    """A file over the upload limit (``limit_bytes``), refused by the browser or the server."""
    return UploadProblem(TOO_LARGE, limit_bytes=limit_bytes)


def refused_upload(refused: UploadRejected, limit_bytes: int) -> UploadProblem:
    """The server's refusal of a file: over ``limit_bytes``, or what is wrong with the file."""
    if refused.code == "too_large":
        return too_large(limit_bytes)
    return UploadProblem("attach.refused", reason_key=refused.key, reason_params=dict(refused.params))
