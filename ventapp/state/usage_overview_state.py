"""The operators' part of the usage page: every user's tokens today against their quota (issue 15),
and the form that sets a user's daily limit (what ``PUT /api/usage/quota`` with ``for_user`` does:
the same validation and refusals, through :func:`~ventapp.auth.roles.set_quota`). The 429 quota
refusal points here ("an operator can raise your daily limit on the usage page")."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import reflex as rx

from ventapp.agent.runtime import get_runtime
from ventapp.auth import roles
from ventapp.auth.roles import Caller
from ventapp.auth.service import AuthRejected
from ventapp.billing import reports
from ventapp.billing.guard import MAX_DAILY_TOKEN_LIMIT
from ventapp.i18n import t
from ventapp.state.chat_data import clean_user_name
from ventapp.state.lang_state import ui_lang
from ventapp.state.ui_identity import none_mode_hint, role_caller, verified_caller, verified_mode
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
    set_for: str = ""
    """The user the limit form sets (a row's "set" fills it)."""
    set_limit: str = ""
    set_error: str = ""
    set_notice: str = ""

    async def _caller(self) -> Caller | None:
        """Who acts, checked anew on every event (a role may have changed since the page loaded)."""
        if verified_mode():
            return await verified_caller(self)
        name = (await self.get_state(UsageState)).user_name
        return await role_caller(name) if name else None

    @rx.event
    async def load(self) -> None:
        """On the usage page's mount, after the login check: the overview if the caller is an operator."""
        self.users, self.is_operator = [], False
        self.set_error = self.set_notice = ""
        caller = await self._caller()
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

    @rx.event
    def pick_user(self, user_name: str) -> None:
        """A row's "set limit": the form names that user."""
        self.set_for, self.set_error, self.set_notice = user_name, "", ""

    @rx.event
    def edit_for(self, value: str) -> None:
        """Typing the user's name in the form."""
        self.set_for, self.set_error, self.set_notice = value, "", ""

    @rx.event
    def edit_limit(self, value: str) -> None:
        """Typing the limit in the form."""
        self.set_limit, self.set_error, self.set_notice = value, "", ""

    @rx.event
    async def save_for(self, form_data: dict[str, Any]) -> None:
        """Submit of the operators' limit form (fields ``for_user``, ``daily_token_limit``; 0 = unlimited).

        Refused as ``PUT /api/usage/quota`` refuses: a limit outside ``0..MAX_DAILY_TOKEN_LIMIT``, a
        name that breaks the naming rule, a caller who is not (or no longer) an operator.
        """
        lang = await ui_lang(self)
        self.set_notice = ""
        raw = str(form_data.get("daily_token_limit", self.set_limit) or "").replace(",", "").strip()
        try:
            value = int(raw)
        except ValueError:
            value = -1
        if not 0 <= value <= MAX_DAILY_TOKEN_LIMIT:
            self.set_error = t("usage.limit_problem", lang, max=fmt(MAX_DAILY_TOKEN_LIMIT, lang))
            return
        owner, problem = clean_user_name(str(form_data.get("for_user", self.set_for) or ""), lang)
        if problem:
            self.set_error = problem
            return
        caller = await self._caller()
        try:
            if caller is None or not caller.is_operator:
                raise AuthRejected(403, "operator_only", "Only an operator may set another user's quota.")
            runtime = get_runtime()
            await asyncio.to_thread(roles.set_quota, runtime.engine, runtime.settings, caller, owner, value)
        except AuthRejected:
            self.set_error = t("auth.operator_only", lang) + none_mode_hint(lang)
            return
        except Exception:
            logger.exception("saving the quota of %r failed", owner)
            self.set_error = t("usage.limit_failed", lang)
            return
        await self.load()  # the table shows the new quota
        self.set_for, self.set_limit = owner, str(value)
        self.set_notice = (
            t("auth.quota_for_none", lang, user=owner)
            if value == 0
            else t("auth.quota_for_set", lang, user=owner, count=fmt(value, lang))
        )
        if owner == (usage := await self.get_state(UsageState)).user_name:
            usage.quota_input = str(value)  # the operator's own figures, above, show it too
            await usage._reload(usage.offset)
