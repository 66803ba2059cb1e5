"""One line saying what a tool returned: shown on a tool card while its result is collapsed.

Our own tools are summarised by what they return, in the UI language (the network solver by
whether it converged, its iterations, airways and fans; a resistance by its value …). Any other
result — an MCP tool, a shape we do not know — says it with a ``summary`` / ``message`` /
``result`` field, then the number of its sources, then its first line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ventapp.agent.interrupts import rejection_reason
from ventapp.agent.tool_failure_words import failure_for_person
from ventapp.i18n import DEFAULT_LANG, t, tn
from ventapp.i18n.formats import measure

SUMMARY_CHARS = 96
"""Longest one-line summary of a tool result (the result itself is behind a disclosure)."""

_TEXT_KEYS = ("summary", "message", "result", "answer", "error")
"""Fields whose text says what a result is, in the order they are looked for."""


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _joined(parts: list[str], lang: str) -> str:
    return t("tool.summary_sep", lang).join(part for part in parts if part)


def _network(data: Mapping[str, Any], lang: str) -> str:
    """``solve_ventilation_network``: converged or not, iterations, airways, fans, reversed airways."""
    iterations = int(_num(data.get("iterations")) or 0)
    state = "tool.summary_converged" if data.get("converged") else "tool.summary_not_converged"
    reversed_count = int(_num((data.get("reversed") or {}).get("count")) or 0)
    fans = data.get("fans")
    return _joined(
        [
            tn(state, iterations, lang),
            tn("tool.summary_airways", int(_num(data.get("airways")) or 0), lang),
            tn("tool.summary_fans", len(fans), lang) if isinstance(fans, list) and fans else "",
            tn("tool.summary_reversed", reversed_count, lang) if reversed_count else "",
        ],
        lang,
    )


def _quantity(key: str, value: Any, lang: str) -> str:
    number = _num(value)
    return "" if number is None else t(key, lang, value=measure(number, lang))


def _resistance(data: Mapping[str, Any], lang: str) -> str:
    """``airway_resistance`` / ``combine_resistances``: R, and the pressure drop for a flow."""
    r = data.get("resistance_ns2_m8")
    total = r.get("total") if isinstance(r, Mapping) else r
    return _joined(
        [
            _quantity("tool.summary_resistance", total, lang),
            _quantity("tool.summary_pressure_drop", data.get("pressure_drop_pa"), lang),
        ],
        lang,
    )


def _fan_laws(data: Mapping[str, Any], lang: str) -> str:
    """``fan_laws_scale``: the new flow, pressure and power (those that were given)."""
    return _joined(
        [
            _quantity("tool.summary_flow", data.get("flow_m3_s"), lang),
            _quantity("tool.summary_pressure", data.get("pressure_pa"), lang),
            _quantity("tool.summary_power", data.get("power_kw"), lang),
        ],
        lang,
    )


def _operating_point(data: Mapping[str, Any], lang: str) -> str:
    """``fan_operating_point``: the duty point and whether it is stable; else why there is none."""
    if not data.get("found"):  # never the domain's English message: the card speaks the UI language
        return t("tool.summary_no_duty", lang)
    stable = t("tool.summary_stable" if data.get("stable") else "tool.summary_unstable", lang)
    return _joined(
        [
            _quantity("tool.summary_flow", data.get("flow_m3_s"), lang),
            _quantity("tool.summary_pressure", data.get("pressure_pa"), lang),
            stable,
        ],
        lang,
    )


def _velocity(data: Mapping[str, Any], lang: str) -> str:
    """``check_air_velocity``: the velocity and the verdict."""
    verdict = t("tool.summary_within" if data.get("within_limits") else "tool.summary_outside", lang)
    return _joined([_quantity("tool.summary_velocity", data.get("velocity_m_s"), lang), verdict], lang)


def _demand(data: Mapping[str, Any], lang: str) -> str:
    """``airflow_demand``: the required flow, the methane coefficient k it used, a velocity over the limit."""
    rows = data.get("requirements")
    ks = [r.get("unevenness_k") for r in rows if isinstance(r, Mapping)] if isinstance(rows, list) else []
    velocity = data.get("velocity")
    outside = isinstance(velocity, Mapping) and velocity.get("within_limits") is False
    return _joined(
        [
            _quantity("tool.summary_demand", data.get("required_flow_m3_s"), lang),
            *(_quantity("tool.summary_methane_k", k, lang) for k in ks),
            t("tool.summary_velocity_outside", lang) if outside else "",
        ],
        lang,
    )


def _passages(data: Any, lang: str) -> str:
    """``knowledge_search``: how many passages were found."""
    return tn("tool.summary_passages", len(data), lang) if isinstance(data, list) else ""


_BY_TOOL: dict[str, Callable[[Any, str], str]] = {
    "solve_ventilation_network": _network,
    "airway_resistance": _resistance,
    "combine_resistances": _resistance,
    "fan_laws_scale": _fan_laws,
    "fan_operating_point": _operating_point,
    "natural_ventilation_pressure": lambda data, lang: _quantity(
        "tool.summary_nvp", data.get("nvp_pa"), lang
    ),
    "airflow_demand": _demand,
    "check_air_velocity": _velocity,
    "knowledge_search": _passages,
}
"""Our tools whose result data says more than a generic line would (their ``data``, see ``sourced``)."""


def _own_summary(tool: str, payload: Mapping[str, Any], lang: str) -> str:
    summarise = _BY_TOOL.get(tool)
    data = payload.get("data")
    if summarise is None or data is None:
        return ""
    try:
        return summarise(data, lang)
    except (AttributeError, TypeError, ValueError, OverflowError):  # a shape we did not expect
        return ""


def _text_of(payload: Mapping[str, Any]) -> str:
    for key in _TEXT_KEYS:
        value = payload.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return ""


def tool_summary(content: str, lang: str = DEFAULT_LANG, tool: str = "") -> str:
    """One line saying what a tool returned (never raises).

    Args:
        content: The result as the model got it (text, often JSON ``{"data", "sources"}``).
        lang: The UI language.
        tool: The tool's registered name: our own tools are summarised by their result data.

    Returns:
        At most ``SUMMARY_CHARS`` characters on one line; a JSON object says it with its
        ``summary`` / ``message`` / ``result`` / ``error`` field (its own, then its ``data``'s),
        or the number of ``sources``; a failure as :func:`failure_for_person` says it; anything
        else by its first non-empty line.
    """
    reason = rejection_reason(content)
    if reason is not None:  # the card's badge says it was rejected: the line says it did not run, and why
        line = (
            t("tool.rejected_summary", lang, reason=reason)
            if reason
            else t("tool.rejected_summary_bare", lang)
        )
        return _one_line(line)
    text = failure_for_person(content, lang)
    line = ""
    try:
        payload = json.loads(text) if text.startswith("{") else None
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        data = payload.get("data")
        line = _own_summary(tool, payload, lang) or _text_of(payload)
        if not line and isinstance(data, Mapping):
            line = _text_of(data)
        sources = payload.get("sources")
        if not line and isinstance(sources, list):
            line = tn("tool.summary_sources", len(sources), lang)
        if not line:
            line = ", ".join(str(key) for key in list(payload)[:6])
    if not line:
        line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return _one_line(line)


def _one_line(line: str) -> str:
    """``line`` with its whitespace runs as one space, cut to ``SUMMARY_CHARS`` with "…"."""
    line = " ".join(line.split())
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1].rstrip() + "…"
