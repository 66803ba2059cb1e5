"""What is in a session's ``/workspace/``, for people: the files, and one of them by its virtual path.

The agent's file tools and the browser see the same folder (:func:`~ventapp.agent.workspace.area_dir`
of the owner and session): uploads under ``/workspace/uploads/`` and whatever the agent wrote.
Everything here is read-only and stays inside that folder: ``..`` and symlinks that leave it are
never followed. Blocking (file system): call through ``asyncio.to_thread``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from ventapp.agent.workspace import WORKSPACE_ROUTE

MAX_LISTED = 500
"""Most files one listing returns (newest first)."""


@dataclass(frozen=True)
class WorkspaceFile:
    """One file of a session's workspace.

    Attributes:
        path: Its virtual path, e.g. ``/workspace/uploads/notes.txt``.
        size_bytes: Its size in bytes.
        modified: When it was last written (UTC).
    """

    path: str
    size_bytes: int
    modified: datetime


def inside(folder: Path, virtual_path: str) -> Path | None:
    """The real file ``virtual_path`` (``/workspace/...``) names inside ``folder``; None when it is not one.

    None for a path outside ``/workspace/``, with ``..`` or a NUL, that resolves (symlinks) outside
    the folder, or that is not an existing regular file.
    """
    if not virtual_path.startswith(WORKSPACE_ROUTE) or "\x00" in virtual_path:
        return None
    rest = virtual_path[len(WORKSPACE_ROUTE) :]
    parts = PurePosixPath(rest).parts
    if not parts or ".." in parts or rest.startswith("/"):
        return None
    root = folder.resolve()
    real = (root / Path(*parts)).resolve()
    return real if real.is_relative_to(root) and real.is_file() else None


def list_workspace(folder: Path) -> list[WorkspaceFile]:
    """The files under ``folder`` (a session's workspace area), newest first, at most ``MAX_LISTED``.

    Hidden files and anything reached through a symlink are left out; a missing folder is empty.
    """
    if not folder.is_dir():
        return []
    root = folder.resolve()
    found: list[WorkspaceFile] = []
    for real in root.rglob("*"):
        relative = real.relative_to(root)
        if real.is_symlink() or not real.is_file() or any(part.startswith(".") for part in relative.parts):
            continue
        if not real.resolve().is_relative_to(root):
            continue
        stat = real.stat()
        found.append(
            WorkspaceFile(
                path=WORKSPACE_ROUTE + relative.as_posix(),
                size_bytes=stat.st_size,
                modified=datetime.fromtimestamp(stat.st_mtime, UTC),
            )
        )
    found.sort(key=lambda item: (item.modified, item.path), reverse=True)
    return found[:MAX_LISTED]
