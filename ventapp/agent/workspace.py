"""Per-session workspace folders, and the filesystem backend that maps the agent's paths onto them.

Layout on disk (spec 002, "文件隔离")::

    DATA_DIR/workspaces/<hash(user)>/<hash(session)>/workspace/             <- virtual /workspace/
    DATA_DIR/workspaces/<hash(user)>/<hash(session)>/conversation_history/  <- virtual /conversation_history/

One compiled agent serves every session: :class:`SessionFilesystemBackend` picks the
folder on every call from the running graph's config (``configurable.thread_id`` is
the session id, invariant 1; ``configurable.user_name`` — or ``metadata.user_name`` —
the owner). Sub-agents inherit their parent's config, so they share its folder; no
other session's folder is reachable. The folder name depends on the *caller's* user
name too, so even a stolen session id leads into the caller's own (empty) folder.

Paths that resolve outside the folder (``..``, ``~``, symlinks pointing out, NUL
bytes) are refused with a readable tool error, never followed. The folders tools keep there for
their own records (:data:`~ventapp.tools.workspace_files.PRIVATE_FOLDERS`, e.g.
``results/.network-sources/``) are left out of what ``ls``, ``glob`` and ``grep`` return.
"""

from __future__ import annotations

import hashlib
import shutil
import uuid
from pathlib import Path, PurePosixPath
from typing import Any

from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import FileInfo, GlobResult, GrepMatch, GrepResult, LsResult
from langgraph.config import get_config

from ventapp.config import PROJECT_ROOT
from ventapp.tools.workspace_files import PRIVATE_FOLDERS

SKILLS_DIR = PROJECT_ROOT / "skills"
"""Skill folders (``skills/<name>/SKILL.md``), shared by every session and mounted read-only at ``/skills/``."""

WORKSPACE_ROUTE = "/workspace/"
"""Virtual prefix of the session's working files (uploads land in ``/workspace/uploads/``)."""
HISTORY_ROUTE = "/conversation_history/"
"""Virtual prefix of the summariser's archives of compacted history."""
WORKSPACE_AREA = "workspace"
HISTORY_AREA = "conversation_history"
UPLOADS_FOLDER = "uploads"
"""Sub-folder of ``/workspace/`` that receives uploaded files."""

_DIGEST_CHARS = 32


class NoSessionError(RuntimeError):
    """A workspace was used outside an agent run (no session or user in the config)."""


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:_DIGEST_CHARS]


def canonical_session_id(session_id: str) -> str:
    """The session id as the pipeline stores it (canonical lower-case UUID), or unchanged if not a UUID."""
    try:
        return str(uuid.UUID(session_id))
    except ValueError:
        return session_id


def user_dir(workspaces_dir: Path, user_name: str) -> Path:
    """The folder holding every session folder of one user: ``workspaces_dir/<hash(user)>`` (not
    created). Renaming a user (``python -m ventapp.auth rename-user``) moves it."""
    return Path(workspaces_dir) / _digest(user_name)


def session_dir(workspaces_dir: Path, user_name: str, session_id: str) -> Path:
    """The folder of one user's session: ``workspaces_dir/<hash(user)>/<hash(session)>``.

    Args:
        workspaces_dir: ``Settings.workspaces_dir``.
        user_name: The owner (the caller's user name).
        session_id: The session id; UUIDs are canonicalised first.

    Returns:
        The path (not created).
    """
    return user_dir(workspaces_dir, user_name) / _digest(canonical_session_id(session_id))


def area_dir(workspaces_dir: Path, user_name: str, session_id: str, area: str = WORKSPACE_AREA) -> Path:
    """One area (``workspace`` or ``conversation_history``) of a session's folder (not created)."""
    return session_dir(workspaces_dir, user_name, session_id) / area


def delete_session_files(workspaces_dir: Path, user_name: str, session_id: str) -> None:
    """Remove a session's folder and everything in it (nothing happens if it does not exist).

    Blocking: call through ``asyncio.to_thread``.

    Raises:
        OSError: The folder exists but could not be removed.
    """
    folder = session_dir(workspaces_dir, user_name, session_id)
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)


def current_session() -> tuple[str, str]:
    """``(user_name, session_id)`` of the agent run this call happens in.

    Raises:
        NoSessionError: Called outside a graph run, or the run config names no session or user.
    """
    try:
        config = get_config()
    except RuntimeError:
        raise NoSessionError("The workspace is only available while an agent run is in progress.") from None
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    session_id = configurable.get("thread_id")
    user_name = configurable.get("user_name") or metadata.get("user_name")
    if not session_id or not user_name:
        raise NoSessionError("This run names no session and user, so it has no workspace.")
    return str(user_name), str(session_id)


def _shown(found: list[FileInfo] | list[GrepMatch] | None) -> Any:
    """``found`` without what lies in a tools' private folder (None stays None: a failure)."""
    if found is None:
        return None
    return [item for item in found if PRIVATE_FOLDERS.isdisjoint(PurePosixPath(item["path"]).parts)]


class SessionFilesystemBackend(FilesystemBackend):
    """A ``FilesystemBackend`` (virtual mode) whose root is the running session's folder.

    Being a ``FilesystemBackend`` matters: deepagents' permission checks resolve the
    real path of such backends (symlinks included) before allowing an operation.
    """

    def __init__(self, workspaces_dir: Path, area: str, *, max_file_size_mb: int = 10) -> None:
        """Create the backend; no folder is touched until a run uses it.

        Args:
            workspaces_dir: ``Settings.workspaces_dir``.
            area: ``WORKSPACE_AREA`` or ``HISTORY_AREA``; the sub-folder this route maps to.
            max_file_size_mb: Files larger than this are skipped by grep's Python fallback.
        """
        # Deliberately not calling FilesystemBackend.__init__: it would fix ``cwd`` once.
        self._workspaces_dir = Path(workspaces_dir)
        self._area = area
        self.virtual_mode = True
        self.max_file_size_bytes = max_file_size_mb * 1024 * 1024

    @property
    def cwd(self) -> Path:  # type: ignore[override]  # per-call root instead of FilesystemBackend's fixed one
        """The running session's folder for this area (created on first use, symlinks resolved).

        Raises:
            NoSessionError: No agent run is in progress (a RuntimeError, which the
                backend's operations turn into an error result).
        """
        user_name, session_id = current_session()
        folder = area_dir(self._workspaces_dir, user_name, session_id, self._area)
        folder.mkdir(parents=True, exist_ok=True)
        return folder.resolve()

    def _resolve_path(self, key: str) -> Path:
        try:
            return super()._resolve_path(key)
        except ValueError:
            # Traversal, a symlink pointing out, or a NUL byte. FilesystemBackend's
            # operations only turn OSError into error results, so re-raise as one.
            raise PermissionError(
                f"the path leads outside this conversation's workspace; use paths under {WORKSPACE_ROUTE}"
            ) from None

    # The tools' records would read to the model as results of its own (a folder of files named
    # like its networks), and editing one would hand a result name to another upload.
    def ls(self, path: str) -> LsResult:
        """``FilesystemBackend.ls`` without the tools' private folders."""
        listed = super().ls(path)
        listed.entries = _shown(listed.entries)
        return listed

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        """``FilesystemBackend.glob`` without files in the tools' private folders."""
        found = super().glob(pattern, path)
        found.matches = _shown(found.matches)
        return found

    def grep(
        self, pattern: str, path: str | None = None, glob: str | None = None, **options: Any
    ) -> GrepResult:
        """``FilesystemBackend.grep`` without lines of files in the tools' private folders."""
        found = super().grep(pattern, path, glob, **options)
        found.matches = _shown(found.matches)
        return found
