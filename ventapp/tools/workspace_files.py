"""How tools reach the running session's ``/workspace/`` folder without importing the agent.

The agent layer installs a resolver once, when it builds the agent
(:func:`set_workspace_resolver`); it returns the real folder behind ``/workspace/`` for the run
the tool is called in (the same folder the agent's file tools see). Tools then turn a virtual
path such as ``/workspace/uploads/net.csv`` into a real path with :func:`resolve`, which refuses
anything that would leave the folder (``..``, absolute host paths, symlinks pointing out).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

WORKSPACE_PREFIX = "/workspace/"
RESULTS_FOLDER = "results"
NETWORK_CLAIMS_FOLDER = ".network-sources"
"""Under ``results/``: which upload each network result stem belongs to
(:func:`ventapp.tools.network_tool.result_stem`)."""
PRIVATE_FOLDERS = frozenset({NETWORK_CLAIMS_FOLDER})
"""Folders tools keep in a workspace for their own records: the agent's file tools list nothing in
them (``ls``, ``glob``, ``grep``), and the browser's listing leaves out every dot name."""

# Why a path is refused, in English for the model (it retries with a better path). The card words
# them for a person through the catalogue (ventapp.agent.tool_failure_words reads the values back), so
# each sentence is a template, filled only here.
NO_WORKSPACE = "the session workspace is not available here (no agent run)"
NO_RUN = "the session workspace is only available during an agent run"
NO_PATH = "give a file path under /workspace/, e.g. /workspace/uploads/network.csv"
NOT_UNDER = "{path} is not a file under /workspace/"
"""``path``: the path as given, quoted (``repr``)."""
LEADS_OUT = "{path} points outside /workspace/"
"""``path``: the path as given, quoted (``repr``)."""
MISSING = "{path} does not exist; list /workspace/uploads/ to see the uploaded files"
"""``path``: the ``/workspace/…`` path."""
REFUSALS = (NO_WORKSPACE, NO_RUN, NO_PATH, NOT_UNDER, LEADS_OUT, MISSING)
"""Every sentence :func:`resolve` and :func:`workspace_root` refuse with."""

_resolver: Callable[[], Path] | None = None
_lock = threading.Lock()


def set_workspace_resolver(resolver: Callable[[], Path] | None) -> None:
    """Install (or clear) the function that returns the running session's workspace folder."""
    global _resolver
    with _lock:
        _resolver = resolver


def workspace_root() -> Path:
    """The running session's workspace folder (created, symlinks resolved).

    Raises:
        ValueError: No resolver is installed or no agent run is in progress.
    """
    resolver = _resolver
    if resolver is None:
        raise ValueError(NO_WORKSPACE)
    try:
        root = Path(resolver())
    except RuntimeError as exc:  # the agent's NoSessionError is a RuntimeError
        raise ValueError(NO_RUN) from exc
    root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


def resolve(virtual_path: str, *, must_exist: bool = True) -> Path:
    """Map ``/workspace/<relative>`` (or a path relative to it) to the real file.

    Args:
        virtual_path: E.g. ``/workspace/uploads/net.csv`` or ``uploads/net.csv``.
        must_exist: Require an existing regular file.

    Returns:
        The real path, inside the workspace folder.

    Raises:
        ValueError: The path leaves ``/workspace/``, contains NUL, or (with ``must_exist``)
            is not an existing file. Messages never show host paths.
    """
    text = (virtual_path or "").strip()
    if not text or "\x00" in text:
        raise ValueError(NO_PATH)
    relative = text[len(WORKSPACE_PREFIX) :] if text.startswith(WORKSPACE_PREFIX) else text
    parts = PurePosixPath(relative).parts
    if relative.startswith("/") or ".." in parts or not parts:
        raise ValueError(NOT_UNDER.format(path=repr(virtual_path)))
    root = workspace_root()
    real = (root / Path(*parts)).resolve()
    if not real.is_relative_to(root):
        raise ValueError(LEADS_OUT.format(path=repr(virtual_path)))
    if must_exist and not real.is_file():
        raise ValueError(MISSING.format(path=to_virtual(real, root)))
    return real


def to_virtual(real: Path, root: Path | None = None) -> str:
    """The ``/workspace/...`` path of a real path inside the workspace folder."""
    base = root or workspace_root()
    return WORKSPACE_PREFIX + real.resolve().relative_to(base).as_posix()


def results_dir() -> Path:
    """``/workspace/results/`` of the running session (created)."""
    folder = workspace_root() / RESULTS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return folder
