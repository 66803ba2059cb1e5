"""``GET /health`` (per-subsystem health), the legacy test page and knowledge-base documents."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse, PlainTextResponse

from ventapp.agent.runtime import get_runtime
from ventapp.api.errors import error_response
from ventapp.api.openapi import errors
from ventapp.config import get_settings
from ventapp.db.engine import probe_write
from ventapp.tools.knowledge import get_document

router = APIRouter(tags=["ops"])

STATIC_DIR = Path(__file__).resolve().parent / "static"


WRITE_PROBE_TIMEOUT_S = 1.0
"""How long ``/health`` waits for the database's write lock before it reports ``down``."""


@router.get("/health", responses=errors())
async def health() -> Any:
    """``{status, model{configured,name,base_url,demo,prompt}, database, spool, checkpointer, config_conflicts[]}``.

    ``status`` is ``ok`` when every subsystem is up, ``degraded`` when the model is
    unconfigured or the fixed prompt (system prompt + tool schemas, ``model.prompt``; null
    until measured just after start-up) takes more than 60% of ``CONTEXT_LIMIT``,
    ``starting`` before the runtime opened, ``error`` if the database fails.
    ``database`` is ``ok`` or ``down``: a write probe (the write lock, then a rollback), since
    a locked SQLite file still answers reads. ``spool`` counts answers and settlements
    parked outside the database, waiting to be written back.
    """
    settings = get_settings()
    body: dict[str, Any] = {
        "status": "ok",
        "model": {
            "configured": settings.model_configured,
            "name": settings.model_name,
            "base_url": settings.openai_base_url or "https://api.openai.com/v1",
            "demo": settings.demo_mode,
            "context_limit": settings.context_limit,
        },
        "config_conflicts": [conflict.public() for conflict in settings.conflicts],
        "env_priority": settings.env_priority,
    }
    try:
        runtime = get_runtime()
    except RuntimeError:
        body.update(status="starting", database="unknown", checkpointer="unknown")
        return body
    try:
        await asyncio.to_thread(probe_write, runtime.engine, WRITE_PROBE_TIMEOUT_S)
        body["database"] = "ok"
    except Exception:
        body.update(status="error", database="down")
    body["spool"] = await asyncio.to_thread(runtime.spool.count)
    budget = runtime.prompt_budget
    body["model"]["prompt"] = budget.public() if budget is not None else None
    if budget is not None and not budget.fits and body["status"] == "ok":
        body["status"] = "degraded"
    body["checkpointer"] = settings.checkpointer
    body["single_process"] = runtime.process_guard.exclusive
    if not runtime.process_guard.exclusive:
        # Another process serves the same DATA_DIR: graph state, gate counts and locks would split.
        body["status"] = "degraded"
    if body["status"] == "ok" and not settings.model_configured:
        body["status"] = "degraded"
    return body


@router.get("/static/index.html", include_in_schema=False)
async def legacy_test_page() -> FileResponse:
    """The spec's minimal test page, streaming from ``/api/chat``."""
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html")


@router.get(
    "/api/kb/{doc_id}",
    responses={200: {"content": {"text/markdown": {"schema": {"type": "string"}}}}, **errors(404)},
)
async def knowledge_document(doc_id: str) -> Any:
    """One knowledge-base document as Markdown (the target of citation links)."""
    doc = get_document(doc_id)
    if doc is None:
        return error_response(404, "not_found", "No such knowledge-base document.")
    return PlainTextResponse(doc.text, media_type="text/markdown; charset=utf-8")
