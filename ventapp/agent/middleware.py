"""Our agent middleware. Each implements both the sync and the async hook (pitfall 4:
the service streams with ``astream``, and a sync-only hook fails inside the model node)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langgraph.config import get_config

from ventapp.agent.prompts import PLAN_MODE_PROMPT


def _in_plan_mode() -> bool:
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:  # outside a graph run (unit tests calling the hook directly)
        return False
    return configurable.get("mode") == "plan"


class PlanModeMiddleware(AgentMiddleware):
    """In ``plan`` mode (``configurable.mode``), tells the model to submit a plan first.

    The plan goes through ``request_plan_approval``; this is guidance, not a permission
    boundary (spec 002): tools with real side effects declare ``requires_approval``.
    """

    def _with_plan_prompt(self, request: ModelRequest) -> ModelRequest:
        if not _in_plan_mode():
            return request
        base = request.system_message.text if request.system_message is not None else ""
        return request.override(system_message=SystemMessage(content=f"{base}\n\n{PLAN_MODE_PROMPT}".strip()))

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        """Sync hook (``invoke``/``stream``)."""
        return handler(self._with_plan_prompt(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async hook (``ainvoke``/``astream``, the service's path)."""
        return await handler(self._with_plan_prompt(request))
