"""deepagents' skills middleware without its ``before_model`` graph node (issue 18).

Every ``before_model`` hook is a node of its own in the compiled graph, so deepagents'
``SkillsMiddleware`` adds a superstep before *each* model call: a task, a checkpoint and its
writes on the checkpointer's thread, all before the model is asked. The hook only pins the skills
named in the state's ``pinned_skills`` (deepagents' API for pinning a skill into the
conversation), and this product never sets that key: a user picks a skill with the
``#skill:<name>`` prefix, which the pipeline turns into the turn's text
(:func:`ventapp.agent.pipeline.agent_input_text`). The subclass below keeps everything else of the
library's middleware — ``before_agent`` (the skills' front matter read into a thread's state when
it has none), the prompt section and tool disclosure in ``wrap_model_call`` — and drops the node:
one superstep fewer before every model call, the first one included.

deepagents builds its own ``SkillsMiddleware`` from ``skills=``; one passed to
``create_deep_agent`` with the same ``name`` takes its place in the stack (deepagents'
``_apply_custom_middleware``). langchain's ``create_agent`` adds a ``before_model`` node only for a
class that overrides ``before_model`` or ``abefore_model`` of ``AgentMiddleware``
(``langchain/agents/factory.py``), so restoring the base class's methods removes the node.
"""

from __future__ import annotations

from deepagents.middleware.skills import SkillsMiddleware
from langchain.agents.middleware.types import AgentMiddleware


class UnpinnedSkillsMiddleware(SkillsMiddleware):
    """``SkillsMiddleware`` with no ``before_model`` node: nothing here pins skills into the state.

    Construct it like the library's (``backend=``, ``sources=``). A ``pinned_skills`` entry in the
    state would be left alone rather than pinned; the product writes none.
    """

    before_model = AgentMiddleware.before_model  # type: ignore[assignment]
    abefore_model = AgentMiddleware.abefore_model  # type: ignore[assignment]

    @property
    def name(self) -> str:
        """The stock middleware's name, so deepagents puts this one in its place."""
        return SkillsMiddleware.__name__
