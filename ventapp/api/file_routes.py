"""Files of a session's workspace for the browser: figures and CSVs that tools wrote.

``GET /api/sessions/{id}/files?path=/workspace/results/x.png&user_name=alice`` serves one file of
the caller's own session (:func:`~ventapp.agent.pipeline.owned_session`: another user's session
or an unknown one is 404, never 403). Only files under ``/workspace/`` of that session, and only
the types tools produce (images and CSV), are served; a path that leaves the folder (``..``,
symlinks) is 404 as well, and nothing is ever listed.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse, JSONResponse

from ventapp.agent.pipeline import ChatRejected, owned_session
from ventapp.agent.workspace import WORKSPACE_AREA, WORKSPACE_ROUTE, area_dir
from ventapp.api.deps import CurrentUser, RuntimeDep
from ventapp.api.errors import error_response
from ventapp.api.openapi import errors

router = APIRouter(tags=["files"])

SERVED_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".csv": "text/csv; charset=utf-8",
}
"""Suffix -> media type of the files the route serves (SVG is excluded: it can carry script)."""
MAX_PATH_CHARS = 1000


def _missing() -> JSONResponse:
    return error_response(404, "not_found", "File not found.")


def _inside(folder: Path, virtual_path: str) -> Path | None:
    if not virtual_path.startswith(WORKSPACE_ROUTE) or "\x00" in virtual_path:
        return None
    parts = PurePosixPath(virtual_path[len(WORKSPACE_ROUTE) :]).parts
    if not parts or ".." in parts or virtual_path[len(WORKSPACE_ROUTE) :].startswith("/"):
        return None
    root = folder.resolve()
    real = (root / Path(*parts)).resolve()
    return real if real.is_relative_to(root) and real.is_file() else None


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
) -> FileResponse | JSONResponse:
    """One image or CSV file from the session's ``/workspace/`` (e.g. a tool's figure)."""
    try:
        session = await owned_session(runtime, session_id, user_name)
    except ChatRejected:
        return error_response(404, "not_found", "Session not found.")
    media_type = SERVED_TYPES.get(PurePosixPath(path).suffix.lower())
    if media_type is None:
        return _missing()
    real = _inside(area_dir(runtime.settings.workspaces_dir, user_name, session.id, WORKSPACE_AREA), path)
    if real is None:
        return _missing()
    return FileResponse(
        real,
        media_type=media_type,
        headers={"Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff"},
    )
