"""The scripted model's rule for MCP tools: a message naming ``<server>__<tool>`` calls it.

``site__read_airflow {"airway": "A7"}`` calls that tool (if the request offers it) with the JSON
object that follows the name as its arguments (``{}`` when none follows).
"""

from __future__ import annotations

import json
import re
from typing import Any

_NAMED = re.compile(r"([A-Za-z0-9][A-Za-z0-9_-]*__[A-Za-z0-9_-]+)\s*(\{.*\})?", re.DOTALL)


def named_tool_call(text: str, offered: set[str]) -> tuple[str, dict[str, Any]] | None:
    """The first offered ``<server>__<tool>`` named in ``text`` and its arguments, or None.

    Args:
        text: The user's message, e.g. ``'use site__read_airflow {"airway": "A7"}'``.
        offered: The tool names the request offers.

    Returns:
        ``(name, arguments)``; arguments that are not a JSON object read as ``{}``.
    """
    for match in _NAMED.finditer(text):
        if match.group(1) not in offered:
            continue
        try:
            arguments = json.loads(match.group(2) or "{}")
        except json.JSONDecodeError:
            arguments = {}
        return match.group(1), arguments if isinstance(arguments, dict) else {}
    return None
