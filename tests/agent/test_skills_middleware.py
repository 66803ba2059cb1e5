"""The skills middleware and deepagents' other defaults without graph nodes (issue 18)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.agent_factory import SKILLS_LABEL, build_agent
from ventapp.agent.model_factory import build_model
from ventapp.agent.skills_middleware import UnpinnedSkillsMiddleware
from ventapp.config import load_settings


def _agent(base_url: str):  # type: ignore[no-untyped-def]
    settings = load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "x"}
    )
    return build_agent(build_model(settings), InMemorySaver(), workspaces_dir=Path(tempfile.mkdtemp()))


def test_the_graph_has_no_node_but_the_model_and_the_tools() -> None:
    """deepagents' skills, dangling-call patch and parent notifier and langchain's todo list each
    added a node (a superstep per turn or per model call); their work moved into the calls."""
    graph = _agent("http://127.0.0.1:9/v1")
    assert set(graph.nodes) == {"__start__", "model", "tools"}
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
    # try14: the bare source "/skills/" rendered as "**Skills Skills**" (the library's template).
    assert "**Skills Skills**" not in systems[0] and f"**{SKILLS_LABEL} Skills**" in systems[0]
    # input, __start__, model, tools, model: 5 checkpoints (10 with the library's nodes: PatchToolCalls
    # and Skills before the agent, TodoList after each model call, _ParentNotifier after the agent).
    assert len(steps) == 5, sorted(steps)
