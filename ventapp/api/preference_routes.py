"""Preferences and approval rules (spec 002 "会话与用量": ``/api/preferences``; issue 10 ``remember``).

Preferences are free text injected into the system context of every turn (chat, resume,
scheduled runs). Approval rules are created by answering an approval with ``remember`` and are
listed and revoked here. The owner is ``user_name`` like on every route; another user's rule is
404.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import Response

from ventapp.agent.refusals import rejected
from ventapp.agent.turn_context import PREFERENCES_MAX_CHARS
from ventapp.api.deps import CurrentUser, RuntimeDep, caller_name
from ventapp.api.openapi import errors
from ventapp.db import preference_store
from ventapp.db.models import iso_utc
from ventapp.text_rules import holds_nul

router = APIRouter(tags=["preferences"])


def _iso(moment: Any) -> str | None:
    return iso_utc(moment)


@router.get("/api/preferences", responses=errors())
async def get_preferences(runtime: RuntimeDep, user_name: CurrentUser) -> dict[str, Any]:
    """``{"user_name", "preferences": "<text>", "updated_at"}`` (empty text and null time when none)."""
    row = await asyncio.to_thread(preference_store.get_preferences, runtime.engine, user_name)
    return {
        "user_name": user_name,
        "preferences": row.text if row is not None else "",
        "updated_at": _iso(row.updated_at) if row is not None else None,
    }


@router.put("/api/preferences", responses=errors(state_changing=True))
async def put_preferences(
    request: Request,
    runtime: RuntimeDep,
    preferences: str = Body(embed=True),
    user_name: str | None = Body(default=None, embed=True),
    query_user: str | None = Query(default=None, alias="user_name"),
) -> dict[str, Any]:
    """Replace the user's preferences: body ``{"user_name", "preferences": "<text>"}``.

    Errors: 413 longer than ``PREFERENCES_MAX_CHARS`` characters; 400 a different ``user_name``
    in the query and the body, or a NUL (U+0000) in the text; 422 no ``preferences`` string.
    """
    stated_twice = user_name is not None and query_user is not None
    if stated_twice and user_name != query_user and getattr(request.state, "caller", None) is None:
        raise rejected(400, "bad_request", "refusal.user_name.differs")
    owner = caller_name(request, user_name if user_name is not None else query_user)
    if len(preferences) > PREFERENCES_MAX_CHARS:
        raise rejected(
            413,
            "too_large",
            "refusal.preferences_too_long",
            limit=PREFERENCES_MAX_CHARS,
            count=len(preferences),
        )
    if holds_nul(preferences):
        raise rejected(400, "bad_request", "refusal.nul_character.preferences")
    row = await asyncio.to_thread(
        preference_store.put_preferences, runtime.engine, owner, preferences.strip()
    )
    return {"user_name": owner, "preferences": row.text, "updated_at": _iso(row.updated_at)}


@router.delete("/api/preferences", status_code=204, responses=errors(state_changing=True))
async def delete_preferences(runtime: RuntimeDep, user_name: CurrentUser) -> Response:
    """Forget the user's preferences (204 whether or not there were some)."""
    await asyncio.to_thread(preference_store.delete_preferences, runtime.engine, user_name)
    return Response(status_code=204)


@router.get("/api/approvals/rules", responses=errors())
async def list_rules(runtime: RuntimeDep, user_name: CurrentUser) -> dict[str, Any]:
    """The user's approval rules: ``{"items": [{id, tool, scope, session_id, created_at}]}``, oldest first."""
    rules = await asyncio.to_thread(preference_store.list_rules, runtime.engine, user_name)
    return {
        "items": [
            {
                "id": rule.id,
                "tool": rule.tool,
                "scope": rule.scope,
                "session_id": rule.session_id,
                "created_at": _iso(rule.created_at),
            }
            for rule in rules
        ]
    }


@router.delete("/api/approvals/rules/{rule_id}", status_code=204, responses=errors(404, state_changing=True))
async def delete_rule(rule_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> Response:
    """Revoke a rule: the tool asks again from the next run on. 404 when it is not the user's."""
    if not await asyncio.to_thread(preference_store.delete_rule, runtime.engine, user_name, rule_id):
        raise rejected(404, "not_found", "refusal.no_rule")
    return Response(status_code=204)
