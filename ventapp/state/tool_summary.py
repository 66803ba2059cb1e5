"""One line saying what a tool returned: shown on a tool card while its result is collapsed."""

from __future__ import annotations

import json

from ventapp.i18n import DEFAULT_LANG, t

SUMMARY_CHARS = 96
"""Longest one-line summary of a tool result (the result itself is behind a disclosure)."""


def tool_summary(content: str, lang: str = DEFAULT_LANG) -> str:
    """One line saying what a tool returned (never raises).

    A JSON object says it with its ``summary`` / ``message`` / ``result`` / ``error`` field, or
    the number of ``sources``; anything else by its first non-empty line; cut at ``SUMMARY_CHARS``.
    """
    text = content.strip()
    line = ""
    try:
        payload = json.loads(text) if text.startswith("{") else None
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        for key in ("summary", "message", "result", "answer", "error"):
            value = payload.get(key)
            if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value).strip():
                line = str(value)
                break
        sources = payload.get("sources")
        if not line and isinstance(sources, list):
            line = t("tool.summary_sources", lang, count=len(sources))
        if not line:
            line = ", ".join(str(key) for key in list(payload)[:6])
    if not line:
        line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = " ".join(line.split())
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1].rstrip() + "…"
