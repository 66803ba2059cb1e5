"""Why a schedule's run failed or did not run, in a reader's language (the schedules page, the API).

A run record keeps ``error_code`` and ``error``, an English sentence: the API's ``error_detail``,
for whoever runs the server. The scheduler's own sentences with values (:data:`STORED_SENTENCES`)
are the English catalogue's, so a reader's language words them again with the same values, read
back from the stored sentence; rows stored before they came from the catalogue read the same
(the English templates are those sentences). Anything else is worded by its code.
"""

from __future__ import annotations

from ventapp.billing.guard import raisable_quota_words
from ventapp.i18n import has_message, t
from ventapp.i18n.templates import read_back

MISSED_LATE = "runs.error.missed_late"
"""A tick found too late to run (``missed``); value ``seconds``: ``SCHEDULER_MISFIRE_GRACE_S``."""
NOT_STARTED = "runs.error.not_started"
"""The pipeline could not admit the run for an unexpected reason (``internal``, logged)."""
STORED_SENTENCES = (MISSED_LATE, NOT_STARTED)
"""Catalogue ids whose English sentence the scheduler stores as a run's ``error``."""

RUN_ERRORS = ("overlap", "interrupted", "missed", "session_deleted")
"""Why a run did not happen, recorded by the scheduler itself (``runs.error.<code>``)."""
WORDED_HERE = ("model_failed",)
"""Pipeline codes whose chat sentence (``error.<code>``) offers the chat's Retry, which this page does
not have: worded by ``runs.error.<code>`` instead, which points at the schedule's "Run now"."""


def stored_sentence(key: str, **values: object) -> str:
    """The English sentence a run record stores for ``key`` (one of :data:`STORED_SENTENCES`).

    E.g. ``stored_sentence(MISSED_LATE, seconds=300)`` is ``"This tick was more than 300 seconds
    late (SCHEDULER_MISFIRE_GRACE_S) and did not run."``.
    """
    return t(key, "en", **values)


def _reworded(stored: str, lang: str) -> str | None:
    """``stored`` in ``lang`` when it is one of the scheduler's stored sentences, with its values; else None."""
    for key in STORED_SENTENCES:
        values = read_back(t(key, "en"), stored)
        if values is not None:
            return t(key, lang, **values)
    return None


def run_error_text(code: str | None, stored: str | None, lang: str) -> str:
    """Why a run failed or did not run, in ``lang`` (the stored ``error`` is English, for the API).

    A sentence the scheduler stored with values (:data:`STORED_SENTENCES`, e.g. a tick 300 s
    late), then the scheduler's own codes (:data:`RUN_ERRORS`) and :data:`WORDED_HERE`, then the
    pipeline's (``error.<code>``: quota, an unreachable model …), then a sentence naming the code;
    ``""`` for a run without error.
    """
    if not code and not stored:
        return ""
    reworded = _reworded(stored, lang) if stored else None
    if reworded is not None:
        return reworded
    if code in RUN_ERRORS or code in WORDED_HERE:
        return t(f"runs.error.{code}", lang)
    if code == "quota" and (raisable := raisable_quota_words(stored or "", lang)):
        return raisable[0]  # refused for a limit the user lowered: the usage page raises it again
    if code and has_message(f"error.{code}"):
        return t(f"error.{code}", lang)
    return t("runs.error.other", lang, code=code or "internal")


def api_run_error(code: str | None, stored: str | None, lang: str) -> str | None:
    """A run's ``error`` as the API answers it in ``lang``: English as stored, else :func:`run_error_text`.

    Returns:
        None for a run without error.
    """
    if not code and not stored:
        return None
    return stored if lang == "en" and stored else run_error_text(code, stored, lang)
