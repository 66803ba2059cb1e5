"""The assembly summary tells the truth about the built agent (issue 10, ``GET /api/model``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware

from ventapp.agent import agent_factory
from ventapp.agent.model_factory import build_model
from ventapp.config import load_settings
from ventapp.tools import registry


def _middleware_in(graph: Any) -> set[str]:
    """Every middleware the compiled graph holds: hook nodes, and the model-call wrappers' owners."""
    found = {name.split(".", 1)[0] for name in graph.nodes if "Middleware." in name}
    seen: set[int] = set()

    def walk(obj: Any, depth: int = 0) -> None:
        if depth > 80 or id(obj) in seen:
            return
        seen.add(id(obj))
        owner = getattr(obj, "__self__", None)
        if isinstance(owner, AgentMiddleware):
            found.add(owner.name)
        function = getattr(obj, "__func__", obj)
        for cell in getattr(function, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            for item in value if isinstance(value, list | tuple) else (value,):
                if callable(item):
                    walk(item, depth + 1)

    walk(graph.nodes["model"].bound.afunc)
    return found


@pytest.mark.parametrize(
    ("profile", "compaction", "hitl"), [("full", True, ()), ("lean", False, ("calculate",))]
)
def test_middleware_stack_names_what_the_graph_holds(
    tmp_path: Path, profile: str, compaction: bool, hitl: tuple[str, ...]
) -> None:
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
            "MODEL_NAME": f"m-{profile}",
        }
    )
    graph = agent_factory.build_agent(
        build_model(settings),
        None,
        workspaces_dir=tmp_path,
        hitl_tools=hitl,
        compaction_enabled=compaction,
        tools_profile=profile,
    )
    listed = agent_factory.middleware_stack(
        compaction_enabled=compaction,
        tools_profile=profile,
        approvals=bool(registry.approval_required() or hitl),
    )
    assert len(listed) == len(set(listed))
    assert set(listed) == _middleware_in(graph)
    task = graph.nodes["tools"].bound.tools_by_name["task"]
    assert all(name in task.description for name in agent_factory.subagent_names())
