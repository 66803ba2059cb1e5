"""``GET /health`` (per-subsystem health), the legacy test page and knowledge-base documents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from ventapp.agent.endpoint_probe import Check, public_url
from ventapp.agent.health import subsystems
from ventapp.agent.refusals import rejected
from ventapp.agent.runtime import get_runtime
from ventapp.api.deps import PUBLIC
from ventapp.api.openapi import errors
from ventapp.api.wording import RequestLang
from ventapp.config import Settings, get_settings
from ventapp.scheduler.service import get_service
from ventapp.tools.knowledge import get_document

router = APIRouter(tags=["ops"])

STATIC_DIR = Path(__file__).resolve().parent / "static"


class HealthBody(BaseModel):
    """``/health``'s body (200 and 503 alike); fields beyond these are listed in the route's docstring."""

    model_config = ConfigDict(extra="allow")

    status: str = Field(description="ok | degraded | error (a subsystem is down) | starting")
    subsystems: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="name -> {status: ok|degraded|down, reason, ...}"
    )
    config_conflicts: list[dict[str, str]] = Field(default_factory=list)
    config_unknown_keys: list[dict[str, str]] = Field(
        default_factory=list,
        description="{key, suggestion, detail}: keys of .env that VentAgent does not read (a misspelt "
        "setting, suggestion = the closest one, or empty); logged once at start, they change nothing",
    )
    auth: dict[str, Any] = Field(
        default_factory=dict, description="{mode: none|local|header, verified, note}: are identities checked"
    )


def _scheduler() -> Check:
    try:
        service = get_service()
    except RuntimeError:
        return Check("down", "The schedule service is not running; schedules do not fire.")
    if not service.firing:
        return Check(
            "down", "The schedule service stopped; schedules do not fire.", {"jobs": service.job_count}
        )
    running = len(service.executions)
    return Check(
        "ok", f"{service.job_count} schedule(s) armed.", {"jobs": service.job_count, "running": running}
    )


def _auth(settings: Settings) -> dict[str, Any]:
    """``{mode, verified, note}``: whether the server checks who is asking (``AUTH_MODE``)."""
    auth = settings.auth
    notes = {
        "none": "Identities are not verified: user_name is whatever the client states (AUTH_MODE=none). "
        "Use this only on a trusted network.",
        "local": "Identities are verified: accounts with passwords, login sessions and API keys.",
        # Public route: name the mechanism, never the proxies' addresses.
        "header": "Identities are verified by the authenticating proxy (AUTH_TRUSTED_HEADER), or by API keys.",
    }
    return {"mode": auth.mode, "verified": auth.verified, "note": notes[auth.mode]}


@router.get(
    "/health",
    openapi_extra=PUBLIC,
    response_model=HealthBody,
    responses={
        **errors(),
        503: {"model": HealthBody, "description": "A subsystem is down (the body says which and why)"},
    },
)
async def health() -> Any:
    """Per-subsystem health: 200 when nothing is down, 503 when a subsystem is.

    ``subsystems`` holds ``database`` (a write probe: a locked SQLite file still answers
    reads), ``checkpointer``, ``model_endpoint`` (the main route's endpoint probed with a short
    timeout and cached for a few seconds; other routes under ``routes``), ``scheduler``,
    ``billing`` (a configured model without a price, whose chats are refused; settlements waiting in
    ``billing_pending`` and the spool file) and
    ``process_guard`` (one process per ``DATA_DIR``) and ``mcp_servers`` (each MCP server under
    ``servers`` with its ``status`` up|down|disabled and ``reason``), each ``{status: ok|degraded|down, reason}``.

    Kept for existing clients: ``status`` (``ok``; ``degraded`` when a subsystem is degraded,
    no model is configured, or the fixed prompt takes more than 60% of ``CONTEXT_LIMIT``;
    ``error`` when a subsystem is down; ``starting`` before the runtime opened),
    ``model{configured,name,base_url,demo,context_limit,prompt}``, ``database`` (``ok`` |
    ``down``), ``spool`` (entries parked outside the database), ``checkpointer``,
    ``single_process``, ``config_conflicts[]`` and ``env_priority``. ``config_unknown_keys[]``
    lists keys of ``.env`` nothing reads (``{key, suggestion, detail}``; not a conflict: no value
    of another source is involved, and ``status`` stays as it is). ``auth{mode, verified, note}``
    says whether identities are checked (``AUTH_MODE``; ``verified: false`` in ``none`` mode).
    """
    settings = get_settings()
    body: dict[str, Any] = {
        "status": "ok",
        "model": {
            "configured": settings.model_configured,
            "name": settings.model_name,
            "base_url": public_url(settings.openai_base_url),
            "demo": settings.demo_mode,
            "context_limit": settings.context_limit,
        },
        "config_conflicts": [conflict.public() for conflict in settings.conflicts],
        "config_unknown_keys": [unknown.public() for unknown in settings.unknown_keys],
        "env_priority": settings.env_priority,
        "auth": _auth(settings),
    }
    try:
        runtime = get_runtime()
    except RuntimeError:
        body.update(status="starting", database="unknown", checkpointer="unknown", subsystems={})
        return body
    checks = {**await subsystems(runtime), "scheduler": _scheduler()}
    body["subsystems"] = {name: check.public() for name, check in checks.items()}
    body["database"] = "ok" if checks["database"].status == "ok" else "down"
    body["spool"] = checks["billing"].detail.get("spool", 0)
    budget = runtime.prompt_budget
    body["model"]["prompt"] = budget.public() if budget is not None else None
    body["checkpointer"] = settings.checkpointer
    body["single_process"] = runtime.process_guard.exclusive
    statuses = {check.status for check in checks.values()}
    if "down" in statuses:
        body["status"] = "error"
        return JSONResponse(body, status_code=503)
    if "degraded" in statuses or (budget is not None and not budget.fits) or not settings.model_configured:
        body["status"] = "degraded"
    return body


@router.get("/static/index.html", include_in_schema=False, openapi_extra=PUBLIC)
async def legacy_test_page() -> FileResponse:
    """The spec's minimal test page, streaming from ``/api/chat``."""
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html")


@router.get("/static/legacy.css", include_in_schema=False, openapi_extra=PUBLIC)
async def legacy_test_page_style() -> FileResponse:
    """The test page's stylesheet."""
    return FileResponse(STATIC_DIR / "legacy.css", media_type="text/css")


@router.get("/static/legacy-dom.js", include_in_schema=False, openapi_extra=PUBLIC)
async def legacy_test_page_dom() -> FileResponse:
    """The test page's small DOM and storage helpers (loaded before its own script)."""
    return FileResponse(STATIC_DIR / "legacy-dom.js", media_type="text/javascript")


@router.get("/static/legacy-restore.js", include_in_schema=False, openapi_extra=PUBLIC)
async def legacy_test_page_restore() -> FileResponse:
    """The test page's script that shows its session (and a waiting card) again after a reload."""
    return FileResponse(STATIC_DIR / "legacy-restore.js", media_type="text/javascript")


@router.get("/static/legacy-stop.js", include_in_schema=False, openapi_extra=PUBLIC)
async def legacy_test_page_stop() -> FileResponse:
    """The test page's Stop button (``POST /api/chat/stop`` for the open session)."""
    return FileResponse(STATIC_DIR / "legacy-stop.js", media_type="text/javascript")


@router.get(
    "/api/kb/{doc_id}",
    responses={200: {"content": {"text/markdown": {"schema": {"type": "string"}}}}, **errors(404)},
)
async def knowledge_document(
    doc_id: str,
    request_lang: RequestLang,
    lang: Annotated[
        Literal["zh-CN", "en"] | None,
        Query(description="The document's language; wins over Accept-Language (default zh-CN)"),
    ] = None,
) -> Any:
    """One knowledge-base document's body as Markdown (the target of citation links).

    In ``lang`` when given, else in the request's ``Accept-Language`` (the first English or
    Chinese language it lists; none: Chinese, as the citations of an API run). Both versions
    share the id and the citation URL ``/kb/{doc_id}``; ``Content-Language`` says which one came
    (the English original when a document has no translation yet).
    """
    doc = get_document(doc_id, lang or request_lang)
    if doc is None:
        raise rejected(404, "not_found", "refusal.kb_not_found")
    return PlainTextResponse(
        doc.text,
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Language": doc.lang, "Vary": "Accept-Language"},
    )
