"""How a run's usage reads under an answer: duration, tokens, cost, context occupancy, per language.

Pure functions, no Reflex (split from :mod:`ventapp.state.views`, which uses them for stored answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ventapp.agent import events as ev
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.i18n import formats as fmt


def as_usage(usage: ev.Usage | Mapping[str, Any] | None) -> ev.Usage | None:
    """A usage event object from the event itself or its stored dict (unknown keys ignored)."""
    if isinstance(usage, Mapping):
        return ev.Usage.model_validate({k: v for k, v in usage.items() if k in ev.Usage.model_fields})
    return usage


def cost_text(usage: ev.Usage | Mapping[str, Any] | None, lang: str = DEFAULT_LANG) -> str:
    """What a run cost, for people: ``"¥0.0000830"``, ``"$0.00120"`` (:func:`formats.money`, the rule every
    cost shown follows); ``""`` when the model has no price.

    ``usage.cost_micros`` is in micro-units of ``usage.currency`` (1 CNY = 1,000,000).
    """
    usage = as_usage(usage)
    if usage is None or not usage.currency:
        return ""
    return fmt.money(usage.cost_micros, usage.currency, lang)


def context_percent(tokens: int, limit: int) -> int:
    """Context occupancy as a whole percentage, 0–100 (0 when the window is unknown)."""
    if limit <= 0 or tokens <= 0:
        return 0
    return max(0, min(100, round(100 * tokens / limit)))


def context_label(tokens: int, limit: int, lang: str = DEFAULT_LANG) -> str:
    """e.g. ``"Context: 1.1K of 128K tokens (1%)"``; ``""`` when the window is unknown."""
    if limit <= 0:
        return ""
    return t(
        "context.label",
        lang,
        used=fmt.compact(tokens, lang),
        limit=fmt.compact(limit, lang),
        percent=context_percent(tokens, limit),
    )


def usage_footer(
    usage: ev.Usage | Mapping[str, Any] | None, duration_ms: int | None = None, lang: str = DEFAULT_LANG
) -> str:
    """The line under an answer: duration, tokens, cost, context occupancy, in ``lang``.

    Args:
        usage: The run's usage (event object or its stored dict); None or empty for no tokens.
        duration_ms: Wall time of the run in milliseconds, if known.
        lang: The UI language (``"zh-CN"`` | ``"en"``).

    Returns:
        e.g. ``"2.4 sec · 1,234 tokens (1,100 in · 134 out) · ¥0.000123 · context 1.1K / 128K"``
        (no cost when the model has no price), with ``" · estimated"`` when the provider did
        not report usage; ``""`` when nothing is known.
    """
    usage = as_usage(usage)
    parts: list[str] = []
    if duration_ms is not None:
        parts.append(fmt.duration_s(duration_ms, lang))
    if usage is not None and usage.total_tokens:
        parts.append(
            t(
                "footer.tokens",
                lang,
                total=fmt.number(usage.total_tokens, lang),
                input=fmt.number(usage.input_tokens, lang),
                output=fmt.number(usage.output_tokens, lang),
            )
        )
        if cost := cost_text(usage, lang):
            parts.append(cost)
        if usage.context_tokens and usage.context_limit:
            used, limit = fmt.compact(usage.context_tokens, lang), fmt.compact(usage.context_limit, lang)
            parts.append(t("footer.context", lang, used=used, limit=limit))
        if usage.usage_source == "estimate":
            parts.append(t("footer.estimated", lang))
    return " · ".join(parts)
