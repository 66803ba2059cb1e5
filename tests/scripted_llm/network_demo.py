"""The scripted model's rule for the network solver: "solve" / "解算" / "求解" with an uploaded file.

A message that asks to solve and carries an uploaded ``.csv`` or ``.xlsx`` (the pipeline lists it as
``Attached files (read them with read_file): /workspace/uploads/<name>``, several joined by ``", "``;
a name may hold blanks, commas, ``(``, ``#`` or ``&``) calls
``solve_ventilation_network`` on it; a number after "total flow", "total airflow" or "总风量" is passed as
``total_flow`` (m³/s). The tool's result is summarised with its own figures and its first figure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ventapp.agent.tool_failure_words import failure_for_person

_SOLVE = re.compile(r"\bsolve\b|解算|求解", re.IGNORECASE)
_UPLOAD = re.compile(r"/workspace/uploads/[^\s,;]+\.(?:csv|xlsx)", re.IGNORECASE)
"""An upload named in the message's own words (no blanks there: nothing says where the name ends)."""
_ATTACHED = re.compile(r"^Attached files \(read them with read_file\): (.+)$", re.MULTILINE)
"""The pipeline's note under a turn (``ventapp.agent.turn_attachments.note_for``), one line."""
_NEXT_PATH = re.compile(r", (?=/workspace/)")
_NETWORK_FILE = re.compile(r"\.(?:csv|xlsx)$", re.IGNORECASE)


def _upload(text: str) -> str | None:
    """The first network file the turn's attachment note lists, else one the message names."""
    for note in _ATTACHED.finditer(text):
        for path in _NEXT_PATH.split(note.group(1).rstrip()):
            if path.startswith("/workspace/uploads/") and _NETWORK_FILE.search(path):
                return path
    named = _UPLOAD.search(text)
    return named.group(0) if named else None


_TOTAL_FLOW = re.compile(
    r"(?:total[ _]air[ _]?flow|total[ _]flow|总风量)\D{0,5}(\d+(?:\.\d+)?)", re.IGNORECASE
)


def network_call(text: str) -> dict[str, Any] | None:
    """The solver's arguments for ``text`` (``{"path", "total_flow"?}``), or None when it is no such request."""
    upload = _upload(text)
    if upload is None or not _SOLVE.search(text):
        return None
    arguments: dict[str, Any] = {"path": upload}
    if flow := _TOTAL_FLOW.search(text):
        arguments["total_flow"] = float(flow.group(1))
    return arguments


def summarise_network(content: str, lang: str) -> str | None:
    """A short answer from the solver's JSON result (converged, iterations, largest flow, first figure)."""
    try:
        data = json.loads(content).get("data")
    except (ValueError, AttributeError):  # the tool refused (no driver, a bad file): say why
        # In Chinese as a person reads it (the card's words), never the model-facing English.
        return (
            f"解算未完成：{failure_for_person(content, lang)}"
            if lang == "zh-CN"
            else f"The solver did not run: {content}"
        )
    if not isinstance(data, Mapping):
        return None
    largest = (data.get("largest_flows") or [{}])[0]
    flow = largest.get("q_m3_s") if isinstance(largest, Mapping) else None
    figures = data.get("figures") or []
    figure = f"\n\n![network]({figures[0]})" if figures else ""
    if lang == "zh-CN":
        state = "已收敛" if data.get("converged") else "未收敛"
        line = f"网络解算{state}，迭代 {data.get('iterations')} 次"
        return line + (f"，最大风量 {flow:.2f} m³/s。" if isinstance(flow, int | float) else "。") + figure
    state = "converged" if data.get("converged") else "did not converge"
    line = f"The network solution {state} in {data.get('iterations')} iterations"
    return (
        line
        + (f"; the largest airflow is {flow:.2f} m³/s." if isinstance(flow, int | float) else ".")
        + figure
    )
