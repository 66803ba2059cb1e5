"""The settings page's state: model facts, the thinking switch, preferences and approval rules.

Everything goes straight to the layers below (:mod:`ventapp.agent.assembly`, the agent set,
:mod:`ventapp.db.preference_store`) in worker threads where it blocks, never over HTTP to our
own API. The user is the browser-stored ``ventagent_user_name`` the chat page uses. Every
sentence comes from :mod:`ventapp.i18n`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import reflex as rx

from ventapp.agent.agent_set import UnknownRoute
from ventapp.agent.assembly import model_summary
from ventapp.agent.kernel import label_for
from ventapp.agent.subagent_tracker import subagent_label
from ventapp.agent.thinking import UnknownLevel
from ventapp.agent.turn_context import PREFERENCES_MAX_CHARS
from ventapp.db import preference_store
from ventapp.i18n import DEFAULT_LANG, MESSAGES, formats, resolve_lang, t
from ventapp.model_config import DEFAULT_ROUTE
from ventapp.state import turns
from ventapp.state.chat_state import ChatState
from ventapp.state.lang_state import ui_lang
from ventapp.state.model_state import ModelState, RouteOption, route_options
from ventapp.state.ui_identity import (
    came_from,
    login_gone,
    none_mode_hint,
    role_caller,
    to_login,
    user_name_var,
)
from ventapp.state.views import DISPLAY_TZ

logger = logging.getLogger(__name__)


@dataclass
class RuleView:
    """One approval rule as the list shows it."""

    id: str = ""
    tool: str = ""
    label: str = ""
    """The tool's display name in the page's language (``计算器``); ``tool`` is its code name."""
    scope: str = ""
    scope_label: str = ""
    created: str = ""


@dataclass
class ModelView:
    """The main route and its agent, formatted for the page."""

    route: str = ""
    provider: str = ""
    model: str = ""
    base_url: str = ""
    window: str = ""
    tools: str = ""
    """The tools by their catalogue labels in the page's language."""
    tool_ids: str = ""
    """The tools' names as the API and the model know them (shown small, for operators)."""
    mcp: str = ""
    """The MCP servers, each with its state and tools (``; ``-separated)."""
    subagents: str = ""
    """The sub-agents by their labels in the page's language."""
    subagent_ids: str = ""
    skills: str = ""
    middleware: str = ""


def model_view(summary: dict[str, Any], lang: str = DEFAULT_LANG) -> ModelView:
    """``GET /api/model``'s summary as the page shows it, worded in ``lang``."""
    agent = summary["agent"]
    return ModelView(
        route=t("model.route_default", lang) if summary["name"] == DEFAULT_ROUTE else summary["name"],
        provider=summary["provider"],
        model=summary["model"],
        base_url=summary["base_url"],
        window=t(
            "settings.window_value",
            lang,
            tokens=formats.number(summary["context_limit"], lang),
            source=summary["context_source"],
        ),
        tools=formats.names([label_for(tool, lang) for tool in agent["tools"]], lang),
        tool_ids=formats.names(agent["tools"], lang),
        mcp=mcp_view(agent.get("mcp_servers") or {}, lang),
        subagents=formats.names([subagent_label(name, lang) for name in agent["subagents"]], lang),
        subagent_ids=formats.names(agent["subagents"], lang),
        skills=formats.names(agent["skills"], lang),
        middleware=" → ".join(agent["middleware"]),
    )


def thinking_label(level: str, lang: str = DEFAULT_LANG) -> str:
    """A thinking level (``default``, ``off``, ``low``, ``medium``, ``high``, ``on``) as the UI names it."""
    key = f"settings.thinking_level.{level}"
    return t(key, lang) if key in MESSAGES["en"] else level


def preferences_too_long(text: str, lang: str = DEFAULT_LANG) -> str:
    """The refusal of preferences over :data:`PREFERENCES_MAX_CHARS` characters, numbers grouped as
    the page's help writes them (``4,000``); ``""`` when ``text`` fits."""
    if len(text) <= PREFERENCES_MAX_CHARS:
        return ""
    limit, count = formats.number(PREFERENCES_MAX_CHARS, lang), formats.number(len(text), lang)
    return t("settings.too_long", lang, limit=limit, count=count)


def mcp_view(servers: dict[str, dict[str, Any]], lang: str = DEFAULT_LANG) -> str:
    """``agent.mcp_servers`` of ``GET /api/model`` as one line per server's state, worded in ``lang``."""
    if not servers:
        return t("settings.mcp_none", lang)
    return t("settings.mcp_join", lang).join(
        t(
            f"settings.mcp_{state['status']}",
            lang,
            name=name,
            tools=formats.names(state["tools"], lang) or "-",
            reason=state["reason"].rstrip("."),
        )
        for name, state in servers.items()
    )


def rule_view(rule: Any, lang: str = DEFAULT_LANG) -> RuleView:
    """A stored :class:`~ventapp.db.preference_models.ApprovalRule` as a list row."""
    return RuleView(
        id=rule.id,
        tool=rule.tool,
        label=label_for(rule.tool, lang),
        scope=rule.scope,
        scope_label=t("settings.rule_always" if rule.scope == "always" else "settings.rule_session", lang),
        created=formats.date_time(rule.created_at, lang, DISPLAY_TZ),
    )


class SettingsState(rx.State):
    """State of the settings page (route ``/settings``)."""

    user_name: str = user_name_var()
    problem: str = ""
    model: ModelView = ModelView()
    thinking_level: str = ""
    thinking_levels: list[str] = []
    thinking_note: str = ""
    thinking_route: str = ""
    """The route the page shows and the switch sets ("" until read: the chat header's choice)."""
    route_names: list[str] = []
    route_options: list[RouteOption] = []
    """The routes as the chat's picker shows them (unpriced ones marked and not choosable)."""
    may_switch: bool = False
    """Only operators switch the thinking level (it changes the agent of every user)."""
    switch_reason: str = ""
    """Why the switch is disabled ("" for an operator)."""
    preferences: str = ""
    preferences_note: str = ""
    preferences_failed: bool = False
    """``preferences_note`` says the text was not saved (shown as an error, not as a confirmation)."""
    rules: list[RuleView] = []
    lang: str = DEFAULT_LANG
    """The UI language (``LangState``'s, read on load and on a switch)."""

    async def _user(self) -> str:
        # The stored name reaches this state's copy only at the next page load; a name set on
        # the chat page moments ago (then a click on the settings link) is the chat state's.
        if not self.user_name:
            self.user_name = (await self.get_state(ChatState)).user_name
        return self.user_name

    async def _signed_out(self) -> bool:
        """True, and this state cleared, when the tab's login ended on the server (the caller
        returns :func:`~ventapp.state.ui_identity.to_login`; nothing is done as the user)."""
        if not await login_gone(self, await self._user()):
            return False
        self.reset()
        return True

    async def _read(self) -> None:
        runtime = turns.current_runtime()
        if runtime is None:
            self.problem = t("settings.not_ready", self.lang)
            return
        route = self.thinking_route or (await self.get_state(ModelState)).route
        try:
            try:
                summary = await model_summary(runtime, self.user_name, route)
            except UnknownRoute:  # gone from MODELS since it was chosen: the main route
                summary = await model_summary(runtime, self.user_name)
            caller = await role_caller(self.user_name)
            row = await asyncio.to_thread(preference_store.get_preferences, runtime.engine, self.user_name)
            rules = await asyncio.to_thread(preference_store.list_rules, runtime.engine, self.user_name)
            options = await asyncio.to_thread(route_options, runtime)
        except Exception:
            logger.exception("reading the settings of %r failed", self.user_name)
            self.problem = t("settings.load_failed", self.lang)
            return
        self.problem = ""
        self.model = model_view(summary, self.lang)
        self.thinking_route = summary["name"]
        self.route_names = [item["name"] for item in summary["routes"]]
        self.route_options = options
        self.may_switch = caller.is_operator
        self.switch_reason = (
            ""
            if caller.is_operator
            else t("settings.thinking_operators", self.lang) + none_mode_hint(self.lang)
        )
        self.thinking_level = summary["thinking"]["level"]
        self.thinking_levels = summary["thinking"]["levels"]
        self.preferences = row.text if row is not None else ""
        self.rules = [rule_view(rule, self.lang) for rule in rules]

    @rx.event
    async def load_page(self) -> None:
        """On mount: the model facts, the user's preferences and rules."""
        self.lang = await ui_lang(self)
        self.thinking_note = self.preferences_note = ""
        self.preferences_failed = False
        self.thinking_route = ""  # the route chosen in the chat header (ModelState), read afresh
        if not await self._user():
            self.problem = t("settings.needs_name", self.lang)
            return
        await self._read()

    @rx.event
    async def relocalise(self, lang: str) -> None:
        """After the header's language switch: re-word the page in ``lang``."""
        self.lang = resolve_lang(lang)
        self.thinking_note = self.preferences_note = ""
        self.preferences_failed = False
        if self.user_name:
            await self._read()

    @rx.event
    async def pick_route(self, route: str) -> None:
        """The route select: show that route, whose thinking level the switch then sets (an unpriced
        route cannot be picked, as in the chat's picker)."""
        if route in self.route_names and not any(o.name == route and o.unpriced for o in self.route_options):
            self.thinking_route, self.thinking_note = route, ""
            await self._read()

    @rx.event
    async def set_thinking(self, level: str) -> Any:
        """The thinking switch: rebuild the shown route's agent at ``level`` (runs in flight keep theirs)."""
        if await self._signed_out():
            return to_login(came_from(self))
        runtime = turns.current_runtime()
        if runtime is None:
            self.thinking_note = t("settings.not_ready", self.lang)
            return None
        if not (await role_caller(self.user_name)).is_operator:
            self.thinking_note = t("auth.operator_only", self.lang) + none_mode_hint(self.lang)
            return None
        try:
            built = await runtime.agents.set_thinking(self.thinking_route or None, level)
        except UnknownLevel as unknown:
            self.thinking_note = unknown.worded(self.lang)
            return None
        except Exception:
            logger.exception("switching the thinking level to %r failed", level)
            self.thinking_note = t("settings.thinking_failed", self.lang)
            return None
        self.thinking_level = built.thinking
        self.model.model = built.model
        self.thinking_note = t(
            "settings.thinking_saved",
            self.lang,
            level=thinking_label(built.thinking, self.lang),
            model=built.model,
        )

    @rx.event
    async def save_preferences(self, form_data: dict[str, Any]) -> Any:
        """Replace the user's preferences with the form's ``preferences`` text."""
        if await self._signed_out():
            return to_login(came_from(self))
        text = str(form_data.get("preferences") or "").strip()
        self.preferences_failed = True
        self.preferences_note = preferences_too_long(text, self.lang)
        if self.preferences_note:
            return None
        runtime = turns.current_runtime()
        if runtime is None or not await self._user():
            self.preferences_note = t("settings.not_ready", self.lang)
            return None
        try:
            if text:
                await asyncio.to_thread(
                    preference_store.put_preferences, runtime.engine, self.user_name, text
                )
            else:
                await asyncio.to_thread(preference_store.delete_preferences, runtime.engine, self.user_name)
        except Exception:
            logger.exception("saving the preferences of %r failed", self.user_name)
            self.preferences_note = t("settings.save_failed", self.lang)
            return None
        self.preferences = text
        self.preferences_failed = False
        self.preferences_note = t("settings.saved", self.lang) if text else t("settings.cleared", self.lang)

    @rx.event
    async def clear_preferences(self) -> Any:
        """Forget the user's preferences."""
        return await self.save_preferences({"preferences": ""})

    @rx.event
    async def revoke(self, rule_id: str) -> Any:
        """Revoke one of the user's approval rules; the tool asks again from the next run."""
        if await self._signed_out():
            return to_login(came_from(self))
        runtime = turns.current_runtime()
        if runtime is None or not await self._user():
            return None
        try:
            await asyncio.to_thread(preference_store.delete_rule, runtime.engine, self.user_name, rule_id)
            rules = await asyncio.to_thread(preference_store.list_rules, runtime.engine, self.user_name)
        except Exception:
            logger.exception("revoking rule %s of %r failed", rule_id, self.user_name)
            self.problem = t("settings.load_failed", self.lang)
            return None
        self.rules = [rule_view(rule, self.lang) for rule in rules]
