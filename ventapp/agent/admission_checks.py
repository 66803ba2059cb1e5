"""The admission steps every run takes, a new turn's (:func:`~ventapp.agent.pipeline.start_chat`)
and a resumed one's (:func:`~ventapp.agent.resume.start_resume`) alike.

In the order the two admissions take them: the session is the user's (404,
:func:`owned_session`); its model route (:func:`route_name`) and the billing precheck
(:func:`check_billing`: 503 unpriced, 429 quota); a gate slot (:func:`take_slot`: 429 busy);
the session claimed across processes (:func:`claim_session`: 409). A database that refuses
the admission's writes answers 503 (:func:`storage_unavailable_is_503`). Every refusal is a
:class:`~ventapp.agent.refusals.ChatRejected` raised before anything streams.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from sqlalchemy.exc import OperationalError

from ventapp.agent.admission import GateFull
from ventapp.agent.agent_set import UnknownRoute
from ventapp.agent.coordination import CoordinationUnavailable, Held
from ventapp.agent.refusals import ChatRejected, rejected, session_not_found, unknown_route
from ventapp.agent.runtime import AgentRuntime
from ventapp.billing.guard import BillingRejected, RunBilling, precheck
from ventapp.db import chat_store
from ventapp.model_config import DEFAULT_ROUTE

logger = logging.getLogger(__name__)

STORAGE_RETRY_AFTER_S = 5
_P = ParamSpec("_P")
_T = TypeVar("_T")


def storage_unavailable_is_503(admit: Callable[_P, Awaitable[_T]]) -> Callable[_P, Awaitable[_T]]:
    """Admission against a database that refuses writes (locked, disk full, gone) answers 503.

    The engine's short busy timeout (``DB_BUSY_TIMEOUT_S``) makes this quick; without it
    the client waited 30 s for a bare 500.
    """

    @functools.wraps(admit)
    async def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return await admit(*args, **kwargs)
        except OperationalError as exc:
            logger.warning("admission refused: the database is unavailable (%r)", exc)
            raise rejected(
                503, "storage", "refusal.storage_admission", retry_after=STORAGE_RETRY_AFTER_S
            ) from None

    return guarded


async def owned_session(runtime: AgentRuntime, session_id: str, user_name: str) -> Any:
    """The user's session by id (any UUID spelling); the one ownership rule of every route.

    Raises:
        ChatRejected: 404 when the id is malformed, unknown or another user's (never 403).
    """
    try:
        canonical = str(uuid.UUID(session_id))
    except (ValueError, TypeError, AttributeError):
        raise session_not_found() from None
    session = await asyncio.to_thread(chat_store.get_session, runtime.engine, canonical)
    if session is None or session.user_name != user_name:
        raise session_not_found()
    return session


def route_name(runtime: AgentRuntime, requested: str | None, stored: str | None = None) -> str:
    """The route a turn runs on: the one asked for, else the session's (while configured), else the main.

    Raises:
        ChatRejected: 400 ``unknown_model`` for a requested route that is not configured (the
            message and ``models`` list the configured names).
    """
    if requested:
        try:
            return runtime.agents.route(requested).name
        except UnknownRoute as unknown:
            raise unknown_route(unknown.name, unknown.names) from None
    if stored and runtime.settings.route(stored) is None:
        logger.warning("session route %r is no longer configured; using the main model", stored)
        return DEFAULT_ROUTE
    return stored or DEFAULT_ROUTE


def billing_read(
    runtime: AgentRuntime, user_name: str, route: str | None = None
) -> Callable[[], RunBilling] | None:
    """The blocking price-and-quota read of a turn, for a worker thread; None when the route has no model.

    The returned call raises ``BillingRejected`` (503 unpriced model, 429 daily quota used up);
    :func:`billing_refusal` turns that into the client's refusal. Take it just before the read:
    it notes the user's tokens booked in this process so far (see ``QuotaReservation``).
    """
    if not runtime.agents.route(route).configured:
        return None  # the run explains how to configure a model; nothing will be billed
    model = runtime.agents.billed_model(route)
    booked_before = runtime.booked.total(user_name)  # before the read: see QuotaReservation
    return functools.partial(
        precheck, runtime.engine, runtime.settings, user_name, model, booked_before=booked_before
    )


def billing_refusal(refused: BillingRejected) -> ChatRejected:
    """The client's refusal for a billing one: the English sentence as billing wrote it (detail);
    the API words it by key and values."""
    return ChatRejected.passed_on(refused)


async def check_billing(runtime: AgentRuntime, user_name: str, route: str | None = None) -> RunBilling | None:
    """Refuse before the model is called: 503 unpriced model (the route's), 429 daily quota used up.

    Returns:
        The price and quota reservation the run keeps (None when the route has no model).
    """
    read = billing_read(runtime, user_name, route)
    if read is None:
        return None
    try:
        return await asyncio.to_thread(read)
    except BillingRejected as refused:
        raise billing_refusal(refused) from None


async def take_slot(runtime: AgentRuntime, user_name: str) -> Held:
    """A gate slot (in total and per user, across processes with ``REDIS_URL``).

    Raises:
        ChatRejected: 429 ``busy`` at a limit; 503 ``coordination_unavailable`` when Redis is down;
            503 ``shutting_down`` once the process was told to stop.
    """
    if runtime.stopping:  # a new answer would hold the shutdown up again
        raise rejected(503, "shutting_down", "refusal.shutting_down", retry_after=5)
    try:
        return await runtime.coordination.take_slot(user_name)
    except CoordinationUnavailable:
        raise rejected(503, "coordination_unavailable", "refusal.coordination_down", retry_after=5) from None
    except GateFull as full:
        key = "refusal.gate_full_server" if full.scope == "process" else "refusal.gate_full_user"
        raise rejected(429, "busy", key, retry_after=full.retry_after, limit=full.limit) from None


async def claim_session(runtime: AgentRuntime, session_id: str) -> Held:
    """Claim the session across processes (after its local lock); 409 when another process runs it.

    Raises:
        ChatRejected: 409 ``busy``; 503 ``coordination_unavailable``.
    """
    try:
        held = await runtime.coordination.claim_session(session_id)
    except CoordinationUnavailable:
        raise rejected(503, "coordination_unavailable", "refusal.coordination_down", retry_after=5) from None
    if held is None:
        raise rejected(409, "busy", "refusal.session_busy")
    return held
