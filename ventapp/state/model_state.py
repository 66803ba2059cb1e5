"""The chat header's model controls: the route picker (per session) and the endpoint-down banner.

The picker lists the configured model routes (``MODELS``; shown only when there is more
than one). The open session's route is read when it is opened; the chosen one is sent with
each turn (:meth:`ventapp.state.chat_state.ChatState.run_agent`) and the session keeps it,
exactly as ``/api/chat``'s ``model`` field does. The banner shows when the main model's
endpoint does not answer (the cached probe ``/health`` uses, never an HTTP call to ourselves).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import reflex as rx

from ventapp.agent.health import model_endpoint
from ventapp.agent.runtime import AgentRuntime
from ventapp.billing.pricing import get_price
from ventapp.db import chat_store
from ventapp.model_config import DEFAULT_ROUTE
from ventapp.state import turns
from ventapp.state.ui_identity import verified_caller, verified_mode

logger = logging.getLogger(__name__)


@dataclass
class RouteOption:
    """One route of the picker: its name, the model its next run uses, and whether it can run."""

    name: str = ""
    model: str = ""
    unpriced: bool = False
    """No price for its model and ``BILLING_ALLOW_UNPRICED=0``: its runs are refused (503)."""


class ModelState(rx.State):
    """Routes on offer, the one the open chat runs on, and whether the model endpoint answers."""

    routes: list[str] = []
    """Configured route names, the main one first."""
    route: str = DEFAULT_ROUTE
    """The route of the open chat (a new chat starts on the main one)."""
    endpoint_down: bool = False
    endpoint_reason: str = ""
    options: list[RouteOption] = []
    """The routes as the picker shows them (model names, unpriced ones marked)."""

    @rx.var
    def model_label(self) -> str:
        """The model the open chat's route runs on ("" before the routes are read)."""
        return next((option.model for option in self.options if option.name == self.route), "")

    @rx.var
    def has_choice(self) -> bool:
        """More than one route is configured: show the picker."""
        return len(self.routes) > 1

    @rx.event
    async def refresh(self) -> None:
        """Read the routes and probe the main endpoint (cached for a few seconds)."""
        runtime = turns.current_runtime()
        if runtime is None:
            return
        self.routes = [route.name for route in runtime.settings.routes]
        try:
            self.options = await asyncio.to_thread(route_options, runtime)
        except Exception:  # the picker still lists the names
            logger.exception("reading the model routes' prices failed")
        try:
            check = await model_endpoint(runtime)
        except Exception:
            logger.exception("probing the model endpoint failed")
            return
        self.endpoint_down = check.status == "down"
        self.endpoint_reason = check.reason if self.endpoint_down else ""

    @rx.event
    async def follow_session(self, session_id: str, user_name: str) -> None:
        """Show the route of the session just opened (the main one for a new chat or a foreign id)."""
        if verified_mode():  # an event sent by hand names anyone: trust only the socket's identity
            caller = await verified_caller(self)
            user_name = caller.name if caller is not None else ""
        runtime = turns.current_runtime()
        route = DEFAULT_ROUTE
        if runtime is not None and session_id:
            try:
                session = await asyncio.to_thread(chat_store.get_session, runtime.engine, session_id)
            except Exception:
                logger.exception("reading the route of session %s failed", session_id)
                session = None
            if session is not None and session.user_name == user_name and session.route:
                route = session.route if runtime.settings.route(session.route) is not None else DEFAULT_ROUTE
        self.route = route

    @rx.event
    def choose(self, route: str) -> None:
        """The picker: the next message of this chat runs on ``route`` (and the session keeps it)."""
        if route in self.routes and not any(o.name == route and o.unpriced for o in self.options):
            self.route = route


def route_options(runtime: AgentRuntime) -> list[RouteOption]:
    """Every route with the model its next run uses and whether it is priced (the chat's picker and
    the settings page's route select show them alike). Blocking."""
    allow = runtime.settings.billing_allow_unpriced
    options = []
    for route in runtime.settings.routes:
        model = runtime.agents.billed_model(route.name)
        unpriced = not allow and get_price(runtime.engine, model) is None
        options.append(RouteOption(name=route.name, model=model, unpriced=unpriced))
    return options
