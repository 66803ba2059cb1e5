"""Sub-agent tracking by ``tool_call_id`` (spec 002, "子智能体跟踪").

The table ``tool_call_id → {type, description, started}`` is written the moment the
``task`` call is seen, and looked up by id afterwards; nothing is reverse-engineered
from namespace strings that compaction can cut. Namespaces (``tools:<task id>``) are
bound to the pending ``task`` calls in the order they first stream.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

_LABELS = {
    "general-purpose": ("通用子智能体", "General-purpose sub-agent"),
    "researcher": ("资料检索员", "Researcher"),
}


def subagent_label(subagent_type: str, lang: str = "zh-CN") -> str:
    """Display name of a sub-agent type in ``lang`` (``"zh-CN"`` | ``"en"``); unknown types as they are."""
    names = _LABELS.get(subagent_type)
    if names is None:
        return subagent_type
    return names[1] if lang == "en" else names[0]


@dataclass
class SubagentRun:
    """One sub-agent invocation. ``duration_ms`` is filled when it finishes."""

    tool_call_id: str
    type: str
    description: str
    started: float = field(default_factory=time.monotonic)
    duration_ms: int = 0

    @property
    def label(self) -> str:
        """Display name of the sub-agent type."""
        return subagent_label(self.type)


class SubagentTracker:
    """Owns the id table for one run."""

    def __init__(self) -> None:
        self._runs: dict[str, SubagentRun] = {}
        self._by_namespace: dict[str, str] = {}

    def start(self, tool_call_id: str, args: dict[str, Any]) -> SubagentRun:
        """Register a ``task`` call (``args``: ``subagent_type``, ``description``)."""
        run = SubagentRun(
            tool_call_id,
            str(args.get("subagent_type") or "general-purpose"),
            str(args.get("description") or ""),
        )
        self._runs[tool_call_id] = run
        return run

    def finish(self, tool_call_id: str) -> SubagentRun | None:
        """Close a run when its ``task`` result arrives; None if it was never started."""
        run = self._runs.get(tool_call_id)
        if run is not None:
            run.duration_ms = int((time.monotonic() - run.started) * 1000)
        return run

    def bind(self, namespace: tuple[str, ...], tool_call_id: str) -> None:
        """Bind ``namespace`` to a known sub-agent, e.g. one whose call was paused for approval.

        Order-based binding cannot tell which of several paused sub-agents resumes first, but a
        call they announced in an earlier run can; a namespace already bound stays as it is.
        """
        self._by_namespace.setdefault(namespace[0], tool_call_id)

    def agent_id_for(self, namespace: tuple[str, ...]) -> str:
        """The ``tool_call_id`` of the sub-agent streaming under ``namespace`` (``"main"`` if unknown)."""
        key = namespace[0]
        if key not in self._by_namespace:
            bound = set(self._by_namespace.values())
            pending = [cid for cid, run in self._runs.items() if cid not in bound and not run.duration_ms]
            self._by_namespace[key] = pending[0] if pending else "main"
        return self._by_namespace[key]

    def label_of(self, agent_id: str) -> str:
        """Display name of the sub-agent with this id."""
        run = self._runs.get(agent_id)
        return run.label if run else agent_id
