"""JSON error bodies: ``{"detail": message, "message": message, "code": code}`` with the right status."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse

from ventapp.agent.pipeline import ChatRejected


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """A JSON error response. ``detail`` mirrors FastAPI's own errors so clients read one key."""
    return JSONResponse(
        {"detail": message, "message": message, "code": code}, status_code=status, headers=headers
    )


async def chat_rejected_handler(_request: Request, exc: Exception) -> JSONResponse:
    """Exception handler turning :class:`ChatRejected` into its HTTP status and JSON body."""
    assert isinstance(exc, ChatRejected)
    return error_response(exc.status, exc.code, exc.message)
