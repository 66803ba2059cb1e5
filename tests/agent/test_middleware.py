"""Our middleware implements both hooks (pitfall 4) and only changes the prompt in plan mode."""

from __future__ import annotations

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import SystemMessage

from ventapp.agent.middleware import PlanModeMiddleware
from ventapp.agent.prompts import PLAN_MODE_PROMPT


def test_both_sync_and_async_hooks_are_implemented() -> None:
    """Pitfall 4: a sync-only wrap_model_call raises NotImplementedError under astream."""
    assert PlanModeMiddleware.wrap_model_call is not AgentMiddleware.wrap_model_call
    assert PlanModeMiddleware.awrap_model_call is not AgentMiddleware.awrap_model_call


def test_prompt_untouched_outside_plan_mode() -> None:
    request = ModelRequest(model=None, messages=[], system_message=SystemMessage(content="base"))  # type: ignore[arg-type]
    seen: list[ModelRequest] = []
    PlanModeMiddleware().wrap_model_call(request, lambda r: seen.append(r) or "ok")  # type: ignore[arg-type,func-returns-value]
    assert seen[0].system_message is not None and seen[0].system_message.text == "base"
    assert PLAN_MODE_PROMPT not in seen[0].system_message.text
