"""Where a client fetches the workspace files an answer links: ``[{path, url}]``.

The agent writes its figures as ``![…](/workspace/results/x.png)``, a path only the agent can
read; a client fetches the file from the session's files route (``GET /api/sessions/{id}/files``,
which checks the owner as any request does). The same list goes out in two places, so it is made
in one: a ``done`` frame's ``workspace_links`` (the answer as saved) and each answer of
``GET /api/chat/history/{id}``.
"""

from __future__ import annotations

import re
from urllib.parse import quote

_WORKSPACE_TARGET = re.compile(r"\]\((/workspace/[^)\s]+)\)")
"""A Markdown link or image target in the agent's workspace: ``![network](/workspace/results/x.png)``."""


def workspace_links(session_id: str, content: str) -> list[dict[str, str]]:
    """The ``/workspace/…`` targets an answer links or embeds, each with the URL that serves it.

    The answer's ``content`` keeps the agent's path, as stored.

    Returns:
        ``[{"path": "/workspace/…", "url": "/api/sessions/{id}/files?path=…"}]`` in order of first
        appearance, each path once.
    """
    paths = dict.fromkeys(_WORKSPACE_TARGET.findall(content))
    base = f"/api/sessions/{quote(session_id)}/files?path="
    return [{"path": path, "url": base + quote(path, safe="/")} for path in paths]
