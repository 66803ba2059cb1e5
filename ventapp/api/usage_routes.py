"""Usage, quota and pricing routes (spec 002, "会话与用量") and ``GET /api/health/billing``.

Thin handlers over ``ventapp.billing``; every database call runs in a thread. The
caller comes from the identity dependency (:data:`~ventapp.api.deps.CallerDep`); what each role
may do with quotas and other users' usage is :mod:`ventapp.auth.roles`. Bad input is a
refusal (``bad_request``, 422) worded by catalogue id: ``message`` follows ``Accept-Language``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from ventapp.agent.refusals import ChatRejected, rejected
from ventapp.agent.runtime import AgentRuntime
from ventapp.api.deps import (
    MAX_WHOLE,
    CallerDep,
    CurrentUser,
    Operator,
    RuntimeDep,
    caller_name,
    resolve_caller,
    user_identity,
)
from ventapp.api.openapi import errors
from ventapp.auth import roles
from ventapp.auth.service import Caller, role_of
from ventapp.billing import guard, pricing, reports

router = APIRouter(tags=["usage"])


def _quota_problem(details: dict[str, Any] | None = None) -> ChatRejected:
    """422 ``bad_request`` for a quota body that is not ``{"daily_token_limit": N[, "for_user": name]}``."""
    return rejected(
        422, "bad_request", "refusal.usage.quota_body", details=details, limit=guard.MAX_DAILY_TOKEN_LIMIT
    )


ForUser = Annotated[
    str | None,
    Query(max_length=200, description="Whose usage (operators only, for another user); default: yours"),
]


def _owner(caller: Caller, for_user: str | None) -> str:
    """Whose usage a request reads: ``for_user`` (operators only) or the caller's own."""
    if for_user is None:
        return caller.name
    owner = user_identity(for_user)
    roles.check_usage_reader(caller, owner)
    return owner


def _whole(raw: str, low: int, high: int | None = None) -> int | None:
    """``raw`` as an int within ``[low, high]``, or None if it is not one."""
    try:
        value = int(raw.strip())
    except ValueError:
        return None
    if value < low or (high is not None and value > high):
        return None
    return value


@router.get("/api/usage/today", responses=errors(403))
async def usage_today(runtime: RuntimeDep, caller: CallerDep, for_user: ForUser = None) -> dict[str, Any]:
    """Today's usage (Asia/Shanghai day) against the quota; ``for_user``: another user's (operators).

    Body: ``{user_name, day, timezone, resets_at, input_tokens, output_tokens, total_tokens,
    calls, by_source{provider{input_tokens,output_tokens}, estimate{...}}, cost[{currency,
    cost_micros, calls, display}], daily_token_limit, quota_source, used_tokens,
    remaining_tokens (null = unlimited), max_daily_token_limit, pending_settlements, pending_tokens}``.
    ``max_daily_token_limit`` is the user's ceiling, the most they may set their own limit to (an
    operator's limit for them, else ``TFAGENTS_DAILY_TOKEN_LIMIT``; tokens, null = unlimited, as
    for an operator, who has none), as the usage page shows it. ``quota_source``: ``operator``
    (a limit an operator set on the user), ``user`` (one the user set below their ceiling) or
    ``default`` (``TFAGENTS_DAILY_TOKEN_LIMIT``).
    """
    owner = _owner(caller, for_user)
    operator = caller.is_operator if owner == caller.name else await _is_operator(runtime, owner)
    today = await asyncio.to_thread(
        reports.today_usage, runtime.engine, runtime.settings, owner, operator=operator
    )
    return today.public()


async def _is_operator(runtime: AgentRuntime, user_name: str) -> bool:
    """Whether ``user_name`` (another user than the caller) is an operator."""
    role = await asyncio.to_thread(role_of, runtime.engine, runtime.settings.auth, user_name)
    return role == "operator"


@router.get("/api/usage/users", responses=errors(403))
async def usage_of_every_user(runtime: RuntimeDep, operator: Operator) -> dict[str, Any]:
    """Every user's usage today (operators only): ``{day, items: [{user_name, input_tokens,
    output_tokens, total_tokens, calls, daily_token_limit, quota_source, remaining_tokens}]}``."""
    del operator  # the role check is the dependency
    return await asyncio.to_thread(reports.every_user_today, runtime.engine, runtime.settings)


@router.get("/api/usage/recent", responses=errors(403))
async def usage_recent(
    runtime: RuntimeDep,
    caller: CallerDep,
    for_user: ForUser = None,
    limit: Annotated[str, Query(description=f"rows per page, 1–{reports.MAX_PAGE}")] = "50",
    offset: Annotated[str, Query(description=f"rows to skip, 0–{MAX_WHOLE}")] = "0",
) -> Any:
    """The user's ledger, newest first: ``{items[], total, limit, offset}``; 422 on a bad page."""
    page_size = _whole(limit, 1, reports.MAX_PAGE)
    skip = _whole(offset, 0, MAX_WHOLE)
    if page_size is None or skip is None:
        problems = [
            {"type": "value_error", "loc": ["query", name], "msg": rule, "input": raw}
            for name, raw, value, rule in (
                ("limit", limit, page_size, f"a whole number from 1 to {reports.MAX_PAGE}"),
                ("offset", offset, skip, f"a whole number from 0 to {MAX_WHOLE}"),
            )
            if value is None
        ]
        raise rejected(
            422,
            "bad_request",
            "refusal.usage.page",
            details={"errors": problems},
            most_rows=reports.MAX_PAGE,
            most_skipped=MAX_WHOLE,
        )
    owner = _owner(caller, for_user)
    return await asyncio.to_thread(reports.recent_usage, runtime.engine, owner, limit=page_size, offset=skip)


@router.get("/api/usage/runs/{run_id}", responses=errors(404))
async def usage_of_run(run_id: str, runtime: RuntimeDep, user_name: CurrentUser) -> Any:
    """The ledger rows of one of the user's runs: ``{run_id, items[]}``; 404 if none are theirs."""
    owner, items = await asyncio.to_thread(reports.run_usage, runtime.engine, run_id)
    if owner is None or owner != user_name:
        raise rejected(404, "not_found", "refusal.usage.no_run")
    return {"run_id": run_id, "items": items}


QUOTA_FIELDS = frozenset({"daily_token_limit", "for_user", "user_name"})
"""What the quota body may carry; anything else is refused rather than ignored."""

QUOTA_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["daily_token_limit"],
                "additionalProperties": False,
                "properties": {
                    "daily_token_limit": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": guard.MAX_DAILY_TOKEN_LIMIT,
                        "description": "Tokens per day (Asia/Shanghai); 0: unlimited",
                    },
                    "for_user": {
                        "type": "string",
                        "description": "Whose quota (operators); default: the caller's",
                    },
                    "user_name": {
                        "type": "string",
                        "description": "The caller (AUTH_MODE=none), as in the query string",
                    },
                },
            }
        }
    },
}


@router.put(
    "/api/usage/quota", responses=errors(state_changing=True), openapi_extra={"requestBody": QUOTA_BODY}
)
async def put_quota(request: Request, runtime: RuntimeDep, caller: CallerDep) -> Any:
    """Set a daily token limit (``{"daily_token_limit": N[, "for_user": name]}``, 0 = unlimited).

    A user may set their own quota up to their ceiling (an operator's limit for them, else
    ``TFAGENTS_DAILY_TOKEN_LIMIT``), so a lowering can be undone; above it, or another user's
    (``for_user``), is for operators (403 ``operator_only``; ``max_daily_token_limit``: the
    ceiling). An operator's limit becomes that user's ceiling. The caller may be named in the body's ``user_name``
    as on ``/api/chat/resume`` (422 if the query string names someone else). 422 on bad input,
    unknown fields included (they were ignored, so a quota meant for one user changed another's).
    Returns the new quota: ``{user_name, daily_token_limit, quota_source, used_tokens,
    remaining_tokens}``.
    """
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError:
        raise _quota_problem() from None
    if isinstance(body, dict) and (unknown := sorted(set(body) - QUOTA_FIELDS)):
        raise _quota_problem({"unknown_fields": unknown})
    stated = body.get("user_name") if isinstance(body, dict) else None
    if stated is not None:
        queried = request.query_params.get("user_name")
        if not isinstance(stated, str) or (queried is not None and queried != stated):
            raise rejected(422, "bad_request", "refusal.usage.caller_twice")
        if queried is None:
            caller = await resolve_caller(request, caller_name(request, stated))
    value = body.get("daily_token_limit") if isinstance(body, dict) else None
    if type(value) is not int or not 0 <= value <= guard.MAX_DAILY_TOKEN_LIMIT:
        raise _quota_problem()
    target = body.get("for_user") if isinstance(body, dict) else None
    if target is not None and not isinstance(target, str):
        raise _quota_problem()
    owner = caller.name if target is None else user_identity(target)
    status = await asyncio.to_thread(roles.set_quota, runtime.engine, runtime.settings, caller, owner, value)
    return {
        "user_name": owner,
        "daily_token_limit": status.daily_token_limit,
        "quota_source": status.source,
        "used_tokens": status.used_tokens,
        "remaining_tokens": status.remaining_tokens,
    }


@router.get("/api/usage/pricing", responses=errors())
async def usage_pricing(runtime: RuntimeDep) -> dict[str, Any]:
    """The pricing table: ``{model, items[{model, currency, input/output_micros_per_mtok, input/output_per_mtok}]}``.

    ``model`` is the configured model; prices are per million tokens.
    """
    prices = await asyncio.to_thread(pricing.list_prices, runtime.engine)
    return {"model": runtime.settings.model_name, "items": [price.public() for price in prices]}


@router.get("/api/usage/pricing/{model}", responses=errors(404))
async def usage_price(model: str, runtime: RuntimeDep) -> Any:
    """One model's price; 404 when it has none."""
    price = await asyncio.to_thread(pricing.get_price, runtime.engine, model)
    if price is None:
        raise rejected(404, "not_found", "refusal.usage.no_price", model=model)
    return price.public()


@router.get("/api/health/billing", responses=errors())
async def billing_health(runtime: RuntimeDep) -> dict[str, Any]:
    """Billing self-check: ``{status, model, priced, price, allow_unpriced, pending_settlements, ...}``.

    ``status``: ``ok``; ``degraded`` (settlements pending, or unpriced but billed at zero);
    ``error`` (the model is unpriced and runs are refused).
    """
    return await asyncio.to_thread(reports.billing_health, runtime.engine, runtime.settings)
