"""Tool approval that hands the model a reviewer's reason as they wrote it.

langchain's ``HumanInTheLoopMiddleware`` answers a rejected call with a synthetic
``ToolMessage`` that wraps the reason in English ("User rejected the tool call for
`calculate` with reason: …"). Our reviewers are mostly Chinese-speaking and the API words a
missing reason in the turn's language, so the wrapper turned a Chinese turn's history into mixed
English that the model then echoed back. The subclass below keeps the library's message (its
``tool_call_id``, ``status="error"``, notification metadata) and only swaps the content for the
decision's message. The callers (the API's resume route, the UI's approval card) word that message
themselves, in the turn's language, as "the user rejected this call" plus the reason
(:func:`ventapp.agent.interrupts.rejection_message`): a bare reason read to the model as the tool's
output, and OpenAI-style requests carry no error status for it to notice.

deepagents builds its own ``HumanInTheLoopMiddleware`` from ``interrupt_on``; a middleware passed to
``create_deep_agent`` with the same ``name`` takes its place in the stack (deepagents'
``_apply_custom_middleware``), so ours sits exactly where the stock one would.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import ToolCall, ToolMessage


class ReasonOnlyApprovalMiddleware(HumanInTheLoopMiddleware):
    """``HumanInTheLoopMiddleware`` whose rejection message is the decision's message as worded.

    Used in the library's default ``batched`` interrupt mode, where every decision passes
    through :meth:`_process_decision` (``per_call`` mode builds its message elsewhere).
    A rejection without a reason keeps the library's own sentence: the API always supplies one
    in the turn's language (``approval.reject_default_reason``), so that only happens to a
    caller that drives the graph directly.
    """

    @property
    def name(self) -> str:
        """The stock middleware's name, so deepagents puts this one in its place."""
        return HumanInTheLoopMiddleware.__name__

    @staticmethod
    def _process_decision(
        decision: Any, tool_call: ToolCall, config: Any
    ) -> tuple[ToolCall | None, ToolMessage | None]:
        """The library's decision handling, with a rejection's content replaced by its reason.

        Args:
            decision: ``{"type": "approve"|"edit"|"reject"|"respond", "message"?: str, ...}``.
            tool_call: The paused call.
            config: The tool's ``interrupt_on`` entry.

        Returns:
            ``(call to keep, synthetic tool message or None)`` as the library returns them.

        Raises:
            ValueError: The decision type is not allowed for this tool (from the library).
        """
        call, message = HumanInTheLoopMiddleware._process_decision(decision, tool_call, config)
        reason = decision.get("message") if decision.get("type") == "reject" else None
        if message is not None and isinstance(reason, str) and reason.strip():
            message = message.model_copy(update={"content": reason})
        return call, message
