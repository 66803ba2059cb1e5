"""The language of the run a tool is called in, without importing the agent.

Tools that draw text into files (the network solver's figures) word it in the language of the
person who started the run: the browser UI's, or ``zh-CN`` (the spec's default) for API and
scheduled runs. The agent layer installs a resolver once, when it builds the agent
(:func:`set_language_resolver`), as it does for the workspace (:mod:`ventapp.tools.workspace_files`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ventapp.i18n import resolve_lang

_resolver: Callable[[], str | None] | None = None
_lock = threading.Lock()


def set_language_resolver(resolver: Callable[[], str | None] | None) -> None:
    """Install (or clear) the function that returns the running turn's UI language (None: none given)."""
    global _resolver
    with _lock:
        _resolver = resolver


def run_language() -> str:
    """``"zh-CN"`` or ``"en"``: the running turn's UI language, ``zh-CN`` without one (or outside a run)."""
    resolver = _resolver
    try:
        chosen = resolver() if resolver is not None else None
    except RuntimeError:  # outside a graph run
        chosen = None
    return resolve_lang(chosen)
