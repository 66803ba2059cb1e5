"""Which files each sent turn carried, read back from the conversation's graph state.

The agent sees a turn's attachments as a note under the message (:func:`agent_input_text` in
:mod:`ventapp.agent.pipeline`); the stored transcript keeps the message alone (its ``content`` is
what the legacy API returns). A reloaded page reads the notes back from the checkpoint, so sent
messages keep their attachment chips without a second copy of the list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import HumanMessage

ATTACHMENTS_NOTE = "Attached files (read them with read_file): "
"""How the agent's copy of a turn lists its attachments (after a blank line)."""


def note_for(paths: Sequence[str]) -> str:
    """The note listing ``paths`` (``/workspace/uploads/<name>``) for the agent's copy of a turn."""
    return ATTACHMENTS_NOTE + ", ".join(paths)


def attachments_of(agent_text: str, message: str) -> list[str] | None:
    """The attachments the agent's copy of a turn lists; None when it is not the copy of ``message``."""
    if not agent_text.startswith(message):
        return None
    for part in agent_text[len(message) :].split("\n\n"):
        if part.startswith(ATTACHMENTS_NOTE):
            return [path for path in part[len(ATTACHMENTS_NOTE) :].split(", ") if path]
    return []


def _text(message: HumanMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)


def match_attachments(messages: Sequence[str], agent_texts: Sequence[str]) -> list[list[str]]:
    """Each stored user message's attachments, matching the agent's copies in order.

    Args:
        messages: The stored user messages, oldest first.
        agent_texts: The human messages of the graph state, oldest first (compaction may have
            removed early ones: those turns get no attachments).

    Returns:
        One list per stored message (empty when unknown).
    """
    out: list[list[str]] = []
    start = 0
    for message in messages:
        found: list[str] = []
        for index in range(start, len(agent_texts)):
            listed = attachments_of(agent_texts[index], message)
            if listed is not None:
                found, start = listed, index + 1
                break
        out.append(found)
    return out


async def sent_attachments(graph: Any, session_id: str, messages: Sequence[str]) -> list[list[str]]:
    """:func:`match_attachments` against the thread's current graph state (empty lists when none)."""
    state = await graph.aget_state({"configurable": {"thread_id": session_id}})
    humans = [_text(m) for m in (state.values or {}).get("messages", []) if isinstance(m, HumanMessage)]
    return match_attachments(messages, humans)
