"""Files of a session's workspace for the browser: the list, a preview, a download.

``GET /api/sessions/{id}/files?path=/workspace/results/x.png&user_name=alice`` serves one file of
the caller's own session (:func:`~ventapp.agent.admission_checks.owned_session`: another user's session
or an unknown one is 404, never 403). Only files under ``/workspace/`` of that session are served;
a path that leaves the folder (``..``, symlinks) is 404 as well. Inline (a figure, a preview) only
the types in ``SERVED_TYPES`` (images, CSV, plain text and Markdown as ``text/plain``);
``download=1`` serves any file as an attachment. ``GET /api/sessions/{id}/workspace`` lists the
session's files (the same folder the agent's file tools see: uploads and what the agent wrote).
"""

from __future__ import annotations

import asyncio
from pathlib import PurePosixPath
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from ventapp.agent.admission_checks import owned_session
from ventapp.agent.refusals import ChatRejected, rejected
from ventapp.agent.workspace import WORKSPACE_AREA, area_dir
from ventapp.agent.workspace_listing import inside, list_workspace
from ventapp.api.deps import CurrentUser, RuntimeDep
from ventapp.api.openapi import errors
from ventapp.db.models import iso_utc

router = APIRouter(tags=["files"])

SERVED_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".csv": "text/csv; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".json": "text/plain; charset=utf-8",
    ".log": "text/plain; charset=utf-8",
}
"""Suffix -> media type of the files served inline (SVG and HTML are excluded: they can carry script)."""
DOWNLOAD_TYPE = "application/octet-stream"
MAX_PATH_CHARS = 1000


def _missing() -> ChatRejected:
    return rejected(404, "not_found", "refusal.file_not_found")


@router.get(
    "/api/sessions/{session_id}/files",
    response_model=None,
    responses={
        200: {
            "description": "The file's bytes (a figure or a CSV a tool wrote)",
            "content": {media.split(";")[0]: {} for media in SERVED_TYPES.values()},
        },
        **errors(404),
    },
)
async def session_file(
    session_id: str,
    runtime: RuntimeDep,
    user_name: CurrentUser,
    path: Annotated[str, Query(max_length=MAX_PATH_CHARS)] = "",
    download: bool = False,
) -> FileResponse:
    """One file from the session's ``/workspace/``: inline (a figure, a preview) or, with ``download``, as an attachment."""
    session = await owned_session(runtime, session_id, user_name)  # 404 unless the user's
    media_type = SERVED_TYPES.get(PurePosixPath(path).suffix.lower())
    if media_type is None and not download:
        raise _missing()
    real = inside(area_dir(runtime.settings.workspaces_dir, user_name, session.id, WORKSPACE_AREA), path)
    if real is None:
        raise _missing()
    return FileResponse(
        real,
        media_type=media_type or DOWNLOAD_TYPE,
        filename=real.name if download else None,
        headers={"Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff"},
    )


@router.get("/api/sessions/{session_id}/workspace", responses=errors(404))
async def session_workspace(session_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> Any:
    """The session's files: ``{"files": [{path, size_bytes, modified}]}``, newest first (ISO 8601 UTC times)."""
    session = await owned_session(runtime, session_id, user_name)  # 404 unless the user's
    folder = area_dir(runtime.settings.workspaces_dir, user_name, session.id, WORKSPACE_AREA)
    files = await asyncio.to_thread(list_workspace, folder)
    return {
        "files": [
            {"path": f.path, "size_bytes": f.size_bytes, "modified": iso_utc(f.modified)} for f in files
        ]
    }
