"""deepagents' skills middleware without graph nodes: skills read once per agent (issue 18).

Every ``before_agent`` and ``before_model`` hook is a node of its own in the compiled graph, so
deepagents' ``SkillsMiddleware`` adds a superstep at the start of every turn (``before_agent``:
read the skills' front matter into a thread's state when it has none) and one before *each*
model call (``before_model``: pin the skills named in the state's ``pinned_skills``). Each is a
task, a checkpoint and its writes on the checkpointer's thread.

This product never pins skills that way (a user picks one with the ``#skill:<name>`` prefix,
which the pipeline turns into the turn's text, :func:`ventapp.agent.pipeline.agent_input_text`),
and the skills on disk change only with a deploy and ``POST /api/model/reload``, which builds a
new agent. So the subclass below reads the front matter once per agent instance, the library's
own way (its ``before_agent``, same backend and sources, load errors included), and hands it to
the library's ``wrap_model_call`` as if it were in the state: the prompt section, the skill-read
detection and the tool disclosure are the library's. No node, no copy of the skills in every
thread's checkpoint, and a reload reaches every session at its next model call.

deepagents builds its own ``SkillsMiddleware`` from ``skills=``; one passed to
``create_deep_agent`` with the same ``name`` takes its place in the stack (deepagents'
``_apply_custom_middleware``). langchain's ``create_agent`` adds a node only for a class that
overrides a hook of ``AgentMiddleware`` (``langchain/agents/factory.py``), so restoring the base
class's methods removes it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from deepagents.middleware.skills import SkillsMiddleware
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse


class UnpinnedSkillsMiddleware(SkillsMiddleware):
    """``SkillsMiddleware`` with no nodes: the skills are read once and given to every model call.

    Construct it like the library's (``backend=``, ``sources=``). What a thread's state holds
    under ``skills_metadata`` (older sessions kept a copy) is ignored in favour of this agent's
    read; a ``pinned_skills`` entry would be left alone rather than pinned (the product writes none).
    """

    before_agent = AgentMiddleware.before_agent  # type: ignore[assignment]
    abefore_agent = AgentMiddleware.abefore_agent  # type: ignore[assignment]
    before_model = AgentMiddleware.before_model  # type: ignore[assignment]
    abefore_model = AgentMiddleware.abefore_model  # type: ignore[assignment]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._skills: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        """The stock middleware's name, so deepagents puts this one in its place."""
        return SkillsMiddleware.__name__

    def read(self) -> dict[str, Any]:
        """The skills as the library's ``before_agent`` reads them, once per instance.

        Returns:
            ``{"skills_metadata": [...], "skills_load_errors": [...]}``.
        """
        if self._skills is None:
            self._skills = dict(SkillsMiddleware.before_agent(self, {}, None, {}) or {})  # type: ignore[arg-type, typeddict-item]
        return self._skills

    async def aread(self) -> dict[str, Any]:
        """Async :meth:`read` (the backend's async listing)."""
        if self._skills is None:
            self._skills = dict(await SkillsMiddleware.abefore_agent(self, {}, None, {}) or {})  # type: ignore[arg-type, typeddict-item]
        return self._skills

    @staticmethod
    def _given(request: ModelRequest, skills: dict[str, Any]) -> ModelRequest:
        return request.override(state={**request.state, **skills})  # type: ignore[typeddict-item]

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        """The library's ``wrap_model_call`` with this agent's skills in the request's state."""
        return super().wrap_model_call(self._given(request, self.read()), handler)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async :meth:`wrap_model_call`."""
        return await super().awrap_model_call(self._given(request, await self.aread()), handler)
