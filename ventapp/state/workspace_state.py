"""The workspace panel: the open session's files under ``/workspace/``, a preview, downloads.

Read-only, and through the same per-session folder the agent's file tools use
(:func:`~ventapp.agent.workspace.area_dir` of the chatting user and the open session): uploads
and what the agent wrote. Previews are read here (text, Markdown, CSV; images load from
``GET /api/sessions/{id}/files``, which checks the owner again); downloads use that route.
"""

from __future__ import annotations

import asyncio
import csv
import io
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import reflex as rx

from ventapp.agent.workspace import WORKSPACE_AREA, area_dir
from ventapp.agent.workspace_listing import WorkspaceFile, inside, list_workspace
from ventapp.config import get_settings
from ventapp.i18n import formats as fmt
from ventapp.state import turns
from ventapp.state.chat_state import ChatState
from ventapp.state.views import DISPLAY_TZ

PREVIEW_BYTES = 64 * 1024
"""Most bytes of a text file a preview shows."""
PREVIEW_ROWS = 50
"""Most rows of a CSV a preview shows."""
_KINDS = {
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".csv": "csv",
    ".md": "markdown",
    ".txt": "text",
    ".json": "text",
    ".log": "text",
}


@dataclass
class WorkspaceFileView:
    """One row of the panel: ``kind`` is image | csv | markdown | text | other (no preview)."""

    path: str = ""
    name: str = ""
    size: str = ""
    modified: str = ""
    kind: str = "other"
    url: str = ""
    download_url: str = ""


@dataclass
class WorkspacePreview:
    """The file shown in the panel: its text (text, Markdown), rows (CSV) or ``url`` (image)."""

    path: str = ""
    name: str = ""
    kind: str = ""
    text: str = ""
    rows: list[list[str]] = field(default_factory=list)
    url: str = ""


def file_url(session_id: str, user_name: str, path: str, *, download: bool = False) -> str:
    """The file route's address for one file of the session (``download`` as an attachment)."""
    url = f"/api/sessions/{quote(session_id)}/files?path={quote(path)}&user_name={quote(user_name)}"
    return url + "&download=1" if download else url


def file_view(item: WorkspaceFile, session_id: str, user_name: str, lang: str) -> WorkspaceFileView:
    """A listed file as a panel row, its size and time written in ``lang``."""
    return WorkspaceFileView(
        path=item.path,
        name=PurePosixPath(item.path).name,
        size=fmt.file_size(item.size_bytes, lang),
        modified=fmt.date_time(item.modified, lang, DISPLAY_TZ),
        kind=_KINDS.get(PurePosixPath(item.path).suffix.lower(), "other"),
        url=file_url(session_id, user_name, item.path),
        download_url=file_url(session_id, user_name, item.path, download=True),
    )


def read_preview(data: bytes, kind: str) -> tuple[str, list[list[str]]]:
    """``(text, rows)`` of a file's first bytes: rows for a CSV, text otherwise (undecodable bytes replaced)."""
    text = data[:PREVIEW_BYTES].decode("utf-8-sig", errors="replace")
    if kind != "csv":
        return text, []
    rows = []
    for row in csv.reader(io.StringIO(text)):
        rows.append(row)
        if len(rows) >= PREVIEW_ROWS:
            break
    return "", rows


def _folder(user_name: str, session_id: str) -> Path:
    runtime = turns.current_runtime()
    settings = runtime.settings if runtime is not None else get_settings()
    return area_dir(settings.workspaces_dir, user_name, session_id, WORKSPACE_AREA)


class WorkspaceState(rx.State):
    """The panel of the open session's files (``#workspace-open`` opens it)."""

    panel_open: bool = False
    files: list[WorkspaceFileView] = []
    preview: WorkspacePreview = WorkspacePreview()

    async def _who(self) -> tuple[str, str, str]:
        chat = await self.get_state(ChatState)
        return chat.user_name, chat.session_id or chat.draft_session_id, chat.lang

    @rx.event
    async def set_panel_open(self, value: bool) -> None:
        """Open (reading the files afresh) or close the panel."""
        self.panel_open = value
        if not value:
            return
        self.preview = WorkspacePreview()
        user_name, session_id, lang = await self._who()
        if not user_name or not session_id:
            self.files = []
            return
        listed = await asyncio.to_thread(list_workspace, _folder(user_name, session_id))
        self.files = [file_view(item, session_id, user_name, lang) for item in listed]

    @rx.event
    async def show(self, path: str) -> None:
        """Preview one listed file (a path not in the list, or gone since, shows nothing)."""
        row = next((f for f in self.files if f.path == path), None)
        user_name, session_id, _lang = await self._who()
        if row is None or not user_name or not session_id:
            self.preview = WorkspacePreview()
            return
        preview = WorkspacePreview(path=row.path, name=row.name, kind=row.kind, url=row.url)
        if row.kind in ("csv", "markdown", "text"):
            real = inside(_folder(user_name, session_id), path)
            if real is None:
                self.preview = WorkspacePreview()
                return
            data = await asyncio.to_thread(_head, real)
            preview.text, preview.rows = read_preview(data, row.kind)
        self.preview = preview


def _head(real: Path) -> bytes:
    with open(real, "rb") as handle:
        return handle.read(PREVIEW_BYTES)
