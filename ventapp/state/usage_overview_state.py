"""The operators' part of the usage page: every user's tokens today against their quota (issue 15)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import reflex as rx

from ventapp.agent.runtime import get_runtime
from ventapp.billing import reports
from ventapp.i18n import t
from ventapp.state.lang_state import ui_lang
from ventapp.state.ui_identity import role_caller, verified_caller, verified_mode
from ventapp.state.usage_state import UsageState, fmt

logger = logging.getLogger(__name__)


@dataclass
class UserUsageView:
    """One user's line of the overview, worded for the UI language."""

    user_name: str
    tokens: str
    calls: str
    quota: str
    remaining: str


class UsageOverviewState(rx.State):
    """Shown to operators only: the list is filled after the role check, never for a user."""

    is_operator: bool = False
    users: list[UserUsageView] = []

    @rx.event
    async def load(self) -> None:
        """On the usage page's mount, after the login check: the overview if the caller is an operator."""
        self.users, self.is_operator = [], False
        if verified_mode():
            caller = await verified_caller(self)
        else:
            name = (await self.get_state(UsageState)).user_name
            caller = await role_caller(name) if name else None
        if caller is None or not caller.is_operator:
            return
        lang = await ui_lang(self)
        try:
            runtime = get_runtime()
            overview = await asyncio.to_thread(reports.every_user_today, runtime.engine, runtime.settings)
        except Exception:
            logger.exception("reading every user's usage failed")
            return
        unlimited = t("auth.unlimited", lang)
        self.is_operator = True
        self.users = [
            UserUsageView(
                user_name=item["user_name"],
                tokens=fmt(item["total_tokens"], lang),
                calls=fmt(item["calls"], lang),
                quota=fmt(item["daily_token_limit"], lang) if item["daily_token_limit"] else unlimited,
                remaining=unlimited
                if item["remaining_tokens"] is None
                else fmt(item["remaining_tokens"], lang),
            )
            for item in overview["items"]
        ]
