"""What every turn is given besides the conversation: the user's preferences and approval rules.

Loaded once when a run starts (chat, resume and scheduled runs alike: they all go through
:class:`~ventapp.agent.chat_run.ChatRun`) and handed to the graph in ``configurable``, where
:class:`~ventapp.agent.middleware.PreferencesMiddleware` and the approval predicate
:func:`needs_review` read them. No database access happens inside the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine

from ventapp.db import preference_store

PREFERENCES_MAX_CHARS = 4000
"""Longest preferences text accepted (characters): it is sent with every model call."""

PREFERENCES_KEY = "preferences"
RULES_KEY = "approval_rules"


@dataclass(frozen=True)
class TurnContext:
    """The user's standing context for one run.

    Attributes:
        preferences: Free text the user asked to be followed in every turn ("" when none).
        auto_approved: ``tool -> call ids excluded`` for tools a rule lets run without asking;
            the excluded calls are the ones the person answered when creating the rule.
    """

    preferences: str = ""
    auto_approved: dict[str, frozenset[str]] = field(default_factory=dict)

    def configurable(self) -> dict[str, Any]:
        """The keys this context adds to the graph's ``configurable``."""
        rules = {tool: sorted(ids) for tool, ids in self.auto_approved.items()}
        return {PREFERENCES_KEY: self.preferences, RULES_KEY: rules}

    def approved_by_rule(self, tool: str, call_id: str) -> bool:
        """Whether this call ran without a card because of a rule."""
        excluded = self.auto_approved.get(tool)
        return excluded is not None and call_id not in excluded


def load_turn_context(engine: Engine, user_name: str, session_id: str) -> TurnContext:
    """Read the user's preferences and the rules that apply in ``session_id`` (blocking: use a thread)."""
    text, rules = preference_store.turn_rows(engine, user_name, session_id)
    auto: dict[str, set[str]] = {}
    for tool, except_call_ids in rules:
        excluded = {call_id for call_id in except_call_ids.split(",") if call_id}
        # Several rules for one tool: a call is excluded only if every rule excludes it.
        auto[tool] = auto[tool] & excluded if tool in auto else excluded
    return TurnContext(
        preferences=text or "",
        auto_approved={tool: frozenset(ids) for tool, ids in auto.items()},
    )


def needs_review(request: Any) -> bool:
    """``interrupt_on[...]["when"]``: False when an approval rule covers this call.

    LangChain's HumanInTheLoopMiddleware asks this again for the paused calls when the run
    resumes, so it must not flip for them: a rule never covers the calls it was created from.

    Args:
        request: The framework's ``ToolCallRequest`` (``tool_call``; ``runtime.config``).
    """
    config = getattr(getattr(request, "runtime", None), "config", None) or {}
    rules = (config.get("configurable") or {}).get(RULES_KEY) or {}
    call = request.tool_call
    excluded = rules.get(call.get("name"))
    return excluded is None or call.get("id") in excluded
