"""The skills middleware without a node before every model call (issue 18)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.agent_factory import build_agent
from ventapp.agent.model_factory import build_model
from ventapp.agent.skills_middleware import UnpinnedSkillsMiddleware
from ventapp.config import load_settings


def _agent(base_url: str):  # type: ignore[no-untyped-def]
    settings = load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "x"}
    )
    return build_agent(build_model(settings), InMemorySaver(), workspaces_dir=Path(tempfile.mkdtemp()))


def test_the_graph_has_no_skills_node_before_the_model_but_keeps_the_read() -> None:
    graph = _agent("http://127.0.0.1:9/v1")
    assert "SkillsMiddleware.before_model" not in graph.nodes
    assert "SkillsMiddleware.before_agent" in graph.nodes, "a thread without skills still reads them"
    assert UnpinnedSkillsMiddleware(backend=None, sources=["/skills/"]).name == "SkillsMiddleware"


async def test_a_tool_loop_takes_one_superstep_per_node_and_the_model_still_lists_the_skills() -> None:
    """Two model calls around a tool: the checkpoints are those of the nodes that remain, and
    both calls' system prompts still carry the skills section (wrap_model_call is kept)."""
    with ScriptedServer() as llm:
        llm.push(
            {"tool_calls": [{"name": "calculate", "arguments": {"expression": "1+1"}}]},
            {"content": "It is 2."},
        )
        graph = _agent(llm.base_url)
        config = {"configurable": {"thread_id": "t1", "user_name": "alice"}}
        async for _ in graph.astream({"messages": [{"role": "user", "content": "1+1?"}]}, config=config):
            pass
        systems = [str(request["messages"][0]["content"]) for request in llm.requests()]
        steps = [state.metadata["step"] async for state in graph.aget_state_history(config)]
    assert len(systems) == 2
    assert all("ventilation-calc" in system for system in systems), "the skills section is in each prompt"
    # input, __start__, PatchToolCalls.before_agent, Skills.before_agent, model, TodoList.after_model,
    # tools, model, TodoList.after_model, _ParentNotifier.after_agent: 10 checkpoints (12 with a
    # Skills.before_model node before each model call).
    assert len(steps) == 10, sorted(steps)
