"""Our agent middleware. Each implements both the sync and the async hook (pitfall 4:
the service streams with ``astream``, and a sync-only hook fails inside the model node)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langgraph.config import get_config

from ventapp.agent.prompts import PLAN_MODE_PROMPT
from ventapp.agent.turn_context import PREFERENCES_KEY
from ventapp.billing.day import USAGE_TZ, USAGE_TZ_NAME


def _configurable() -> dict[str, Any]:
    try:
        return get_config().get("configurable", {})
    except RuntimeError:  # outside a graph run (unit tests calling the hook directly)
        return {}


def _in_plan_mode() -> bool:
    return _configurable().get("mode") == "plan"


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _append_system(request: ModelRequest, text: str) -> ModelRequest:
    base = request.system_message.text if request.system_message is not None else ""
    return request.override(system_message=SystemMessage(content=f"{base}\n\n{text}".strip()))


class PlanModeMiddleware(AgentMiddleware):
    """In ``plan`` mode (``configurable.mode``), tells the model to submit a plan first.

    The plan goes through ``request_plan_approval``; this is guidance, not a permission
    boundary (spec 002): tools with real side effects declare ``requires_approval``.
    """

    def _with_plan_prompt(self, request: ModelRequest) -> ModelRequest:
        return _append_system(request, PLAN_MODE_PROMPT) if _in_plan_mode() else request

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        """Sync hook (``invoke``/``stream``)."""
        return handler(self._with_plan_prompt(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async hook (``ainvoke``/``astream``, the service's path)."""
        return await handler(self._with_plan_prompt(request))


class DynamicTimeMiddleware(AgentMiddleware):
    """Gives the model the current Beijing time on every model call, never frozen at session start.

    A session may last days and a scheduled run fires at 08:00: "today", "last night's readings"
    and shift times only make sense against the clock of the call itself. The time goes at the
    end of the system prompt, to the minute: the calls of one tool loop usually share a minute and
    so send the same prompt prefix, which keeps a provider's prompt cache useful.

    Args:
        clock: Returns an aware ``datetime`` (default: the system clock, read at every call).
    """

    def __init__(self, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__()
        self._clock = clock

    def time_note(self) -> str:
        """The sentence the model sees: ``Current time: 2026-12-01 08:00 (Asia/Shanghai, UTC+08:00).``"""
        now = (self._clock or _utc_now)().astimezone(USAGE_TZ)
        offset = now.strftime("%z")
        return f"Current time: {now:%Y-%m-%d %H:%M} ({USAGE_TZ_NAME}, UTC{offset[:3]}:{offset[3:]})."

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        """Sync hook (``invoke``/``stream``)."""
        return handler(_append_system(request, self.time_note()))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async hook (``ainvoke``/``astream``, the service's path)."""
        return await handler(_append_system(request, self.time_note()))


UI_LANG_KEY = "ui_lang"
"""``configurable`` key: the language of the browser UI the turn came from (absent for API clients)."""


def turn_ui_lang() -> str | None:
    """The running turn's browser UI language (``configurable.ui_lang``; a scheduled run's: its
    schedule's); None for API runs and outside a graph run (tools word their files with it:
    :mod:`ventapp.tools.run_language`)."""
    value = _configurable().get(UI_LANG_KEY)
    return str(value) if value else None


WORDS_LANG_KEY = "words_lang"
"""``configurable`` key: the language of the words the run's tools draw into files (figures): the
browser UI's, an API request's ``Accept-Language``, a scheduled run's schedule's. Unlike
:data:`UI_LANG_KEY` it asks nothing of the model (API clients' models follow the user's language)."""


def turn_words_lang() -> str | None:
    """The language the running turn's tools word their files in (``configurable.words_lang``, else
    ``ui_lang``); None outside a graph run or when the run names none (:mod:`ventapp.tools.run_language`)."""
    configurable = _configurable()
    value = configurable.get(WORDS_LANG_KEY) or configurable.get(UI_LANG_KEY)
    return str(value) if value else None


LANGUAGE_NOTES = {
    "zh-CN": "Interface language: Simplified Chinese (zh-CN). Answer in Simplified Chinese unless the user "
    "writes in another language.",
    "en": "Interface language: English (en). Answer in English unless the user writes in another language.",
}
"""What the model is told per UI language; the first words are stable, so a scripted test model can read them."""


class AnswerLanguageMiddleware(AgentMiddleware):
    """Asks the model to answer in the browser UI's language (``configurable.ui_lang``).

    The legacy API sends no language, and its turns get no note: the model follows the user's
    own language as before. Preferences come after this note, so "answer in English" there wins.
    """

    def _with_language(self, request: ModelRequest) -> ModelRequest:
        note = LANGUAGE_NOTES.get(str(_configurable().get(UI_LANG_KEY) or ""))
        return _append_system(request, note) if note else request

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        """Sync hook (``invoke``/``stream``)."""
        return handler(self._with_language(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async hook (``ainvoke``/``astream``, the service's path)."""
        return await handler(self._with_language(request))


PREFERENCES_HEADER = (
    "The user's standing preferences (follow them unless the user asks otherwise in this conversation):"
)


class PreferencesMiddleware(AgentMiddleware):
    """Puts the user's preferences (``configurable.preferences``) into every model call's system prompt.

    The text is loaded once per run (:mod:`ventapp.agent.turn_context`), so chat, resume and
    scheduled runs all get it, and a change applies from the next run on.
    """

    def _with_preferences(self, request: ModelRequest) -> ModelRequest:
        text = str(_configurable().get(PREFERENCES_KEY) or "").strip()
        return _append_system(request, f"{PREFERENCES_HEADER}\n{text}") if text else request

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        """Sync hook (``invoke``/``stream``)."""
        return handler(self._with_preferences(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async hook (``ainvoke``/``astream``, the service's path)."""
        return await handler(self._with_preferences(request))
