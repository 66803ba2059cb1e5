"""The fixed part of every request — system prompt and tool schemas — measured against ``CONTEXT_LIMIT``.

A model whose window barely holds the fixed part cannot hold a conversation: with the full
tool set that part is about 6,400 tokens, so a 4k-context local model fails on the first
turn and an 8k one after a few. The runtime measures it once at start-up, logs a WARNING
when it takes more than :data:`FIXED_PROMPT_MAX_SHARE` of the window, and ``/health``
reports it (status ``degraded``).

It is measured, not computed: the agent is assembled exactly as the runtime assembles it,
but with a model that records the request it would send (after the ``OPENAI_COMPAT``
rewrite) and answers without calling anything. deepagents builds the system prompt and the
tool list inside its middleware, so only a real pass through the graph sees them as sent.
Tokens are LangChain's offline approximation (about 4 characters per token); a server's own
tokenizer may count ±15% differently.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import PrivateAttr

from ventapp.agent.agent_factory import build_agent
from ventapp.agent.model_factory import build_model
from ventapp.agent.openai_compat import CompatChatOpenAI
from ventapp.config import Settings

logger = logging.getLogger(__name__)

MEASURE_WINDOW = 1_000_000
"""Context window (tokens) the measuring pass runs under, whatever ``CONTEXT_LIMIT`` says."""

FIXED_PROMPT_MAX_SHARE = 0.6
"""Above this share of ``CONTEXT_LIMIT`` the fixed prompt leaves too little room for a conversation."""


@dataclass(frozen=True)
class PromptBudget:
    """The measured fixed prompt.

    Attributes:
        system_tokens: The system prompt (ours, skills list, deepagents' sections), tokens.
        tool_tokens: All tool schemas sent with a request, tokens.
        tools: The tool names the model is shown, in request order.
        context_limit: ``CONTEXT_LIMIT`` (tokens).
        tools_profile: ``TOOLS_PROFILE`` (``full`` | ``lean``).
    """

    system_tokens: int
    tool_tokens: int
    tools: tuple[str, ...]
    context_limit: int
    tools_profile: str

    @property
    def fixed_tokens(self) -> int:
        """System prompt plus tool schemas (tokens)."""
        return self.system_tokens + self.tool_tokens

    @property
    def share(self) -> float:
        """``fixed_tokens / context_limit`` (0–1, may exceed 1)."""
        return self.fixed_tokens / self.context_limit

    @property
    def fits(self) -> bool:
        """True while the fixed prompt takes at most :data:`FIXED_PROMPT_MAX_SHARE` of the window."""
        return self.share <= FIXED_PROMPT_MAX_SHARE

    def public(self) -> dict[str, Any]:
        """The figures as ``/health`` shows them under ``model.prompt``."""
        return {
            "system_tokens": self.system_tokens,
            "tool_tokens": self.tool_tokens,
            "tool_count": len(self.tools),
            "fixed_tokens": self.fixed_tokens,
            "share_of_context": round(self.share, 3),
            "max_share": FIXED_PROMPT_MAX_SHARE,
            "fits": self.fits,
            "tools_profile": self.tools_profile,
        }

    def warning(self) -> str:
        """The operator's WARNING line: sizes, and what to change."""
        return (
            f"the fixed part of every request is ~{self.fixed_tokens} tokens (system prompt "
            f"{self.system_tokens} + {len(self.tools)} tool schemas {self.tool_tokens}), "
            f"{self.share:.0%} of CONTEXT_LIMIT={self.context_limit}: little or no room is left for "
            "the conversation. Set TOOLS_PROFILE=lean for small models, or give the model a larger "
            "window (and CONTEXT_LIMIT to match); see the README's provider table."
        )


class _RecordingModel(CompatChatOpenAI):
    """Records the Chat Completions payload it would send and answers "ok" without any I/O."""

    _recorded: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    async def _astream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        self._recorded.append(self._get_request_payload(messages, stop=stop, **kwargs))
        yield ChatGenerationChunk(message=AIMessageChunk(content="ok"))

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self._recorded.append(self._get_request_payload(messages, stop=stop, **kwargs))
        return self._create_chat_result({"choices": [{"message": {"role": "assistant", "content": "ok"}}]})


async def measure_fixed_prompt(settings: Settings) -> PromptBudget:
    """Assemble the agent as configured and measure the fixed part of its first request.

    The runtime runs this in the background after start-up (it takes ~0.3–1 s of CPU) and logs
    :meth:`PromptBudget.warning` when the result does not :attr:`~PromptBudget.fits`.

    Args:
        settings: The model, ``CONTEXT_LIMIT``, ``OPENAI_COMPAT``, ``TOOLS_PROFILE``,
            ``HITL_TOOLS`` and ``CTX_COMPACT_ENABLED`` settings the runtime uses.

    Returns:
        The measured :class:`PromptBudget`. Nothing is sent anywhere.
    """
    # Measured under a window that holds anything: with the real one, a fixed part larger than
    # the window stops the pass in the compaction middleware before the request is built.
    real = build_model(
        dataclasses.replace(settings, context_limit=max(settings.context_limit, MEASURE_WINDOW))
    )
    model = _RecordingModel(**{name: getattr(real, name) for name in type(real).model_fields})
    # The runtime's own workspaces folder, not a temporary one: assembling an agent installs the
    # process-wide resolver tools use to find a session's /workspace/ (ventapp.tools.workspace_files),
    # and the runtime's agent must keep finding the real folders. The pass calls no tool and
    # writes nothing there.
    agent = build_agent(
        model,
        InMemorySaver(),
        workspaces_dir=settings.workspaces_dir,
        hitl_tools=settings.hitl_tools,
        compaction_enabled=settings.compaction_enabled,
        tools_profile=settings.tools_profile,
    )
    config = {"configurable": {"thread_id": "prompt-budget", "user_name": "prompt-budget"}}
    await agent.ainvoke({"messages": [HumanMessage(content="hi")]}, config=config)
    payload = model._recorded[0]
    system = [m for m in payload["messages"] if m.get("role") in ("system", "developer")]
    tools = list(payload.get("tools") or [])
    return PromptBudget(
        system_tokens=count_tokens_approximately(system) if system else 0,
        tool_tokens=count_tokens_approximately([], tools=tools) if tools else 0,
        tools=tuple(str(tool.get("function", {}).get("name")) for tool in tools),
        context_limit=settings.context_limit,
        tools_profile=settings.tools_profile,
    )


def _measure_on_own_loop(settings: Settings) -> PromptBudget:
    return asyncio.run(measure_fixed_prompt(settings))


async def check_fixed_prompt(settings: Settings) -> PromptBudget | None:
    """Measure the fixed prompt and log it: WARNING when it does not fit, INFO otherwise.

    Returns:
        The budget, or None when it could not be measured (logged; the app runs on).
    """
    try:
        # On a thread with its own loop: assembling the agent is ~0.5 s of CPU the app's loop
        # must not stall for. The coroutine is made there too: one made here and handed over
        # is never awaited when the wait is cancelled before a worker takes the job (a runtime
        # closed just after start-up), and is reported as such when collected.
        budget = await asyncio.to_thread(_measure_on_own_loop, settings)
    except Exception:
        logger.exception("could not measure the fixed prompt size")
        return None
    if budget.fits:
        logger.info(
            "fixed prompt ~%d tokens (%d%% of CONTEXT_LIMIT=%d, TOOLS_PROFILE=%s)",
            budget.fixed_tokens,
            round(budget.share * 100),
            budget.context_limit,
            budget.tools_profile,
        )
    else:
        logger.warning(budget.warning())
    return budget
