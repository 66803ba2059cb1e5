"""Assembles the deep agent: model, tools, sub-agents, skills, backend, checkpointer.

``build_agent`` lists the stack in order:

1. model — ``model_factory.build_model`` (pitfall 2: context window always declared);
2. tools — every tool in ``ventapp.tools.registry`` (invariant 4: tools emit sources);
3. sub-agents — ``researcher``, whose tools are ``BaseTool`` objects from
   ``get_tools_by_name`` (pitfall 3: a bare function breaks inside ToolNode);
4. skills — ``/skills/`` routed to the repository's ``skills/`` folder, read-only;
5. human-in-the-loop — ``interrupt_on`` for tools registered with ``requires_approval``;
6. checkpointer — passed in, opened by the app's lifespan; thread_id = session_id (invariant 1).

Summarisation is deepagents' own middleware (invariant 5): never add a second one.
"""

from __future__ import annotations

from typing import Any

from deepagents import FilesystemPermission, create_deep_agent
from deepagents.backends import CompositeBackend, FilesystemBackend, StateBackend
from langchain_core.language_models import BaseChatModel
from langgraph.types import Checkpointer

from ventapp.agent.prompts import MAIN_SYSTEM_PROMPT, RESEARCHER_PROMPT
from ventapp.config import PROJECT_ROOT
from ventapp.tools import registry

SKILLS_DIR = PROJECT_ROOT / "skills"
"""Skill folders (``skills/<name>/SKILL.md``), mounted read-only at ``/skills/``."""

RESEARCHER = "researcher"


def _build_subagents() -> list[dict[str, Any]]:
    return [
        {
            "name": RESEARCHER,
            "description": "Searches the ventilation knowledge base and summarises what the sources say.",
            "system_prompt": RESEARCHER_PROMPT,
            "tools": registry.get_tools_by_name(["knowledge_search"]),
        }
    ]


def _permissions() -> list[FilesystemPermission]:
    # First match wins (pitfall 10): the specific read allow must come before the broad write deny.
    return [
        FilesystemPermission(operations=["read"], paths=["/skills/**"], mode="allow"),
        FilesystemPermission(operations=["write"], paths=["/skills/**"], mode="deny"),
    ]


def build_agent(model: BaseChatModel, checkpointer: Checkpointer | None) -> Any:
    """Build the compiled deep-agent graph.

    Args:
        model: The chat model (see ``model_factory.build_model``).
        checkpointer: Graph-state store; ``None`` only in unit tests.

    Returns:
        A compiled LangGraph graph; call ``astream({"messages": [...]}, config)`` with
        ``config = {"configurable": {"thread_id": session_id}}`` (input is always a dict, pitfall 6).
    """
    registry.load_builtin_tools()
    backend = CompositeBackend(
        default=StateBackend(),
        routes={"/skills/": FilesystemBackend(root_dir=SKILLS_DIR, virtual_mode=True)},
    )
    return create_deep_agent(
        model=model,
        tools=registry.all_tools(),
        system_prompt=MAIN_SYSTEM_PROMPT,
        subagents=_build_subagents(),
        skills=["/skills/"],
        backend=backend,
        permissions=_permissions(),
        interrupt_on={name: True for name in registry.approval_required()} or None,
        checkpointer=checkpointer,
        name="ventagent",
    )
