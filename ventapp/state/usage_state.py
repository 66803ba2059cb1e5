"""The usage page's state: today's tokens and cost against the quota, 14 days, the ledger.

Reads go straight to ``ventapp.billing`` in ``asyncio.to_thread`` (never HTTP to our own
API; ``ventapp.state`` does not import ``ventapp.api``). The user is the same
browser-stored ``ventagent_user_name`` the chat page uses. Figures arrive formatted in the
UI language (``"12,345"``, dates per locale) so the page only lays them out; provider figures
are labelled "real", offline estimates "estimate", so nobody mistakes one for the other
(invariant 3).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import reflex as rx
from sqlalchemy.engine import Engine

from ventapp.agent.runtime import get_runtime
from ventapp.auth import roles
from ventapp.auth.service import AuthRejected
from ventapp.billing import reports
from ventapp.billing.day import USAGE_TZ, USAGE_TZ_NAME
from ventapp.billing.guard import MAX_DAILY_TOKEN_LIMIT
from ventapp.config import Settings
from ventapp.i18n import DEFAULT_LANG, formats, resolve_lang, t
from ventapp.state.lang_state import ui_lang
from ventapp.state.ui_identity import none_mode_hint, role_caller, user_name_var

logger = logging.getLogger(__name__)

PAGE_SIZE = 20
"""Ledger rows per page of the table."""
CHART_DAYS = 14
NOT_READY = "usage.not_ready"
LOAD_FAILED = "usage.load_failed"


@dataclass
class LedgerRowView:
    """One ledger row as the table shows it (time in Asia/Shanghai, source "real"/"estimate")."""

    id: str = ""
    when: str = ""
    model: str = ""
    source: str = "real"
    input_tokens: str = "0"
    output_tokens: str = "0"
    cost: str = ""
    run_id: str = ""
    run_short: str = ""
    sub_agent: bool = False


@dataclass
class UsageSnapshot:
    """Everything the page shows, read in one worker thread."""

    today: reports.TodayUsage
    series: list[reports.DayTotal]
    recent: dict[str, Any]


def fmt(number: int, lang: str = DEFAULT_LANG) -> str:
    """Tokens for people: ``12345`` → ``"12,345"`` (grouping per ``lang``)."""
    return formats.number(number, lang)


def row_view(item: dict[str, Any], lang: str = DEFAULT_LANG) -> LedgerRowView:
    """A ``reports.ledger_entry`` dict as a table row, worded in ``lang``."""
    created = datetime.fromisoformat(item["created_at"]).replace(tzinfo=UTC)
    return LedgerRowView(
        id=item["id"],
        when=f"{formats.short_date(created.astimezone(USAGE_TZ), lang)} "
        f"{formats.time_of_day(created, lang, USAGE_TZ, seconds=True)}",
        model=item["model"],
        source="real" if item["source"] == "provider" else "estimate",
        input_tokens=fmt(item["input_tokens"], lang),
        output_tokens=fmt(item["output_tokens"], lang),
        cost=formats.money(item["cost_micros"], item["currency"], lang) if item["currency"] else item["cost"],
        run_id=item["run_id"],
        run_short=item["run_id"][:8],
        sub_agent=not item["main_thread"],
    )


def day_point(total: reports.DayTotal, lang: str = DEFAULT_LANG) -> dict[str, Any]:
    """A ``reports.DayTotal`` as one bar of the chart: ``{label: "12/1", input, output}`` (tokens)."""
    return {
        "label": formats.short_date(total.day, lang),
        "input": total.input_tokens,
        "output": total.output_tokens,
    }


def read_snapshot(
    engine: Engine, settings: Settings, user_name: str, offset: int, *, operator: bool = False
) -> UsageSnapshot:
    """Today, the chart series and one ledger page (``operator``: the user has no ceiling).
    Blocking: call in a thread."""
    return UsageSnapshot(
        today=reports.today_usage(engine, settings, user_name, operator=operator),
        series=reports.daily_series(engine, user_name, days=CHART_DAYS),
        recent=reports.recent_usage(engine, user_name, limit=PAGE_SIZE, offset=offset),
    )


class UsageState(rx.State):
    """State of the usage page (route ``/usage``)."""

    user_name: str = user_name_var()
    """The chat page's user name (same browser key)."""

    lang: str = DEFAULT_LANG
    """The UI language the figures are worded in (``LangState``'s, read on load and on a switch)."""
    loaded: bool = False
    problem: str = ""
    day: str = ""
    timezone: str = USAGE_TZ_NAME
    total_tokens: str = "0"
    input_tokens: str = "0"
    output_tokens: str = "0"
    real_tokens: str = "0"
    estimate_tokens: str = "0"
    has_estimates: bool = False
    cost_text: str = "—"
    calls: str = "0"
    limited: bool = False
    limit_text: str = ""
    used_text: str = "0"
    remaining_text: str = ""
    percent_used: int = 0
    quota_source: str = "default"
    ceiling_text: str = ""
    """The most the user may set their own limit to, as a sentence (an operator's limit, else the default)."""
    pending_settlements: int = 0
    pending_tokens: str = "0"

    series: list[dict[str, Any]] = []
    """The 14-day chart's bars (recharts wants plain objects)."""
    rows: list[LedgerRowView] = []
    total_rows: int = 0
    offset: int = 0

    quota_input: str = ""
    quota_error: str = ""
    quota_notice: str = ""
    used_count: int = 0
    """Today's tokens (input + output, pending included), unformatted: what a new limit is held against."""
    quota_confirm: str = ""
    """A limit at or below today's usage waiting for "set it anyway" (digits), else empty."""
    quota_warning: str = ""
    """The sentence asking for that confirmation (chats stop until midnight Beijing time)."""

    @rx.var
    def has_prev(self) -> bool:
        """A newer page of the ledger exists."""
        return self.offset > 0

    @rx.var
    def has_next(self) -> bool:
        """An older page of the ledger exists."""
        return self.offset + PAGE_SIZE < self.total_rows

    @rx.var
    def page_label(self) -> str:
        """``"1–20 of 57"`` (empty without rows)."""
        if not self.total_rows:
            return ""
        last = min(self.offset + PAGE_SIZE, self.total_rows)
        return t("usage.page", self.lang, first=self.offset + 1, last=last, total=self.total_rows)

    def _apply(self, snap: UsageSnapshot) -> None:
        today, lang = snap.today, self.lang
        self.day = formats.long_date(today.day, lang)
        self.total_tokens = fmt(today.total_tokens, lang)
        self.input_tokens = fmt(today.input_tokens, lang)
        self.output_tokens = fmt(today.output_tokens, lang)
        estimate = today.estimate_input_tokens + today.estimate_output_tokens
        self.real_tokens = fmt(today.total_tokens - estimate, lang)
        self.estimate_tokens = fmt(estimate, lang)
        self.has_estimates = estimate > 0
        self.cost_text = (
            " + ".join(
                formats.money(line.cost_micros, line.currency, lang)
                if line.currency
                else line.public()["display"]
                for line in today.costs
            )
            or "—"
        )
        self.calls = fmt(today.calls, lang)
        self.limited = today.daily_token_limit > 0
        self.limit_text = fmt(today.daily_token_limit, lang)
        self.used_text = fmt(today.used_tokens, lang)
        self.used_count = today.used_tokens
        self.remaining_text = fmt(today.remaining_tokens or 0, lang)
        limit = max(1, today.daily_token_limit)
        self.percent_used = min(100, today.used_tokens * 100 // limit) if self.limited else 0
        self.quota_source = today.quota_source
        self.ceiling_text = (
            t("usage.limit_ceiling", lang, ceiling=fmt(today.quota_ceiling, lang))
            if today.quota_ceiling
            else t("usage.limit_ceiling_none", lang)
        )
        self.pending_settlements = today.pending_settlements
        self.pending_tokens = fmt(today.pending_tokens, lang)
        self.series = [day_point(total, lang) for total in snap.series]
        self.rows = [row_view(item, lang) for item in snap.recent["items"]]
        self.total_rows = snap.recent["total"]
        self.offset = snap.recent["offset"]
        if not self.quota_input:
            self.quota_input = str(today.daily_token_limit)

    async def _reload(self, offset: int) -> None:
        try:
            runtime = get_runtime()
        except RuntimeError:
            self.problem, self.loaded = t(NOT_READY, self.lang), True
            return
        try:
            # An operator may set any limit: the form's ceiling reads 不限, as the API's null.
            operator = (await role_caller(self.user_name)).is_operator
            snap = await asyncio.to_thread(
                read_snapshot,
                runtime.engine,
                runtime.settings,
                self.user_name,
                max(0, offset),
                operator=operator,
            )
        except Exception:
            logger.exception("reading usage of %r failed", self.user_name)
            self.problem, self.loaded = t(LOAD_FAILED, self.lang), True
            return
        self.problem = ""
        self._apply(snap)
        self.loaded = True

    @rx.event
    async def load_page(self) -> None:
        """On mount: read today, the last 14 days and the newest ledger rows of the user."""
        self.lang = await ui_lang(self)
        self.quota_error = self.quota_notice = self.quota_confirm = self.quota_warning = ""
        self.quota_input = ""
        if not self.user_name:
            self.loaded = True
            return
        await self._reload(0)

    @rx.event
    async def relocalise(self, lang: str) -> None:
        """After the header's language switch: re-read the figures worded in ``lang``."""
        self.lang = resolve_lang(lang)
        self.quota_error = self.quota_notice = self.quota_confirm = self.quota_warning = ""
        if self.user_name and self.loaded:
            await self._reload(self.offset)

    @rx.event
    async def next_page(self) -> None:
        """Older ledger rows."""
        if self.has_next:
            await self._reload(self.offset + PAGE_SIZE)

    @rx.event
    async def prev_page(self) -> None:
        """Newer ledger rows."""
        if self.has_prev:
            await self._reload(self.offset - PAGE_SIZE)

    @rx.event
    def edit_quota_input(self, value: str) -> None:
        """Typing in the limit field (drops a pending confirmation: it was for another number)."""
        self.quota_input = value
        self.quota_error = self.quota_notice = self.quota_confirm = self.quota_warning = ""

    @rx.event
    def cancel_quota(self) -> None:
        """ "Cancel" on the confirmation: nothing is saved."""
        self.quota_confirm = self.quota_warning = ""

    @rx.event
    async def confirm_quota(self) -> None:
        """ "Set it anyway" on the confirmation: save the limit it asked about."""
        value, self.quota_confirm, self.quota_warning = self.quota_confirm, "", ""
        if value.isdigit():
            await self._store(int(value))

    @rx.event
    async def save_quota(self, form_data: dict[str, Any]) -> None:
        """Submit of the quota form (field ``daily_token_limit``; 0 = no limit).

        A limit at or below today's usage is not saved yet: it asks first (``quota_warning``).
        """
        raw = str(form_data.get("daily_token_limit", self.quota_input) or "").replace(",", "").strip()
        self.quota_notice = self.quota_confirm = self.quota_warning = ""
        try:
            value = int(raw)
        except ValueError:
            value = -1
        if not 0 <= value <= MAX_DAILY_TOKEN_LIMIT:
            self.quota_error = t("usage.limit_problem", self.lang, max=fmt(MAX_DAILY_TOKEN_LIMIT, self.lang))
            return
        if not self.user_name:
            self.quota_error = t("usage.limit_needs_name", self.lang)
            return
        self.quota_error = ""
        if 0 < value <= self.used_count:
            # The next chat would be refused until midnight: say so before it happens (tester, 2 Dec).
            self.quota_confirm = str(value)
            self.quota_warning = t(
                "usage.limit_confirm",
                self.lang,
                count=fmt(value, self.lang),
                used=fmt(self.used_count, self.lang),
            )
            return
        await self._store(value)

    async def _store(self, value: int) -> None:
        """Save ``value`` (tokens, 0 = unlimited) as the user's limit through the role rule."""
        try:
            runtime = get_runtime()
            caller = await role_caller(self.user_name)
            await asyncio.to_thread(
                roles.set_quota, runtime.engine, runtime.settings, caller, self.user_name, value
            )
        except AuthRejected as refused:
            ceiling = (refused.details or {}).get("max_daily_token_limit", 0)
            self.quota_error = t("auth.quota_above_ceiling", self.lang, ceiling=fmt(ceiling, self.lang))
            self.quota_error += none_mode_hint(self.lang)
            return
        except Exception:
            logger.exception("saving the quota of %r failed", self.user_name)
            self.quota_error = t("usage.limit_failed", self.lang)
            return
        self.quota_error = ""
        self.quota_input = str(value)
        self.quota_notice = (
            t("usage.limit_none", self.lang)
            if value == 0
            else t("usage.limit_set", self.lang, count=fmt(value, self.lang))
        )
        await self._reload(self.offset)
