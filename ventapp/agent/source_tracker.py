"""Citations from tool results, never from the model's text (invariant 4).

Tools return ``registry.sourced(data, sources)``; this tracker reads the sources out
of each ``ToolMessage`` and keeps them de-duplicated by URL in first-seen order.
"""

from __future__ import annotations

from ventapp.agent.events import Citation
from ventapp.tools.registry import parse_sourced


class SourceTracker:
    """Collects the run's citations."""

    def __init__(self) -> None:
        self._by_url: dict[str, Citation] = {}

    def add_tool_output(self, content: str, *, tool: str, tool_call_id: str) -> bool:
        """Extract sources from one tool result.

        Returns:
            True when at least one new (not yet seen) source was added.
        """
        added = False
        for item in parse_sourced(content):
            url = item["url"]
            if url in self._by_url:
                continue
            self._by_url[url] = Citation(
                title=item["title"],
                url=url,
                snippet=item.get("snippet") or "",
                score=item.get("score"),
                tool=tool,
                tool_call_id=tool_call_id,
            )
            added = True
        return added

    @property
    def items(self) -> list[Citation]:
        """The citations so far, first-seen order."""
        return list(self._by_url.values())
