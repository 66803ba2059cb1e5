"""Model and agent assembly (pitfalls 2 and 3)."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from ventapp.agent import agent_factory
from ventapp.agent.model_factory import build_model
from ventapp.config import load_settings
from ventapp.tools import registry


def _settings(**extra: str):  # type: ignore[no-untyped-def]
    return load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", **extra}
    )


def test_model_declares_window_for_unknown_model() -> None:
    """Pitfall 2: without max_input_tokens summarisation fails or assumes 170k tokens."""
    model = build_model(_settings(MODEL_NAME="some-local-model", CONTEXT_LIMIT="32768"))
    assert model.profile == {"max_input_tokens": 32768}


def test_model_window_merges_into_known_profile() -> None:
    model = build_model(_settings(MODEL_NAME="gpt-4o-mini", CONTEXT_LIMIT="64000"))
    assert model.profile is not None
    assert model.profile["max_input_tokens"] == 64000 and model.profile.get("tool_calling") is True


def test_model_streams_usage_over_chat_completions() -> None:
    model = build_model(_settings())
    assert model.stream_usage is True and model.use_responses_api is False
    assert str(model.openai_api_base) == "http://127.0.0.1:9/v1"


def test_subagent_tools_are_base_tools() -> None:
    """Pitfall 3: sub-agent tools go straight into ToolNode, which reads ``tool_.name``."""
    registry.load_builtin_tools(reload=True)
    (researcher,) = agent_factory._build_subagents()
    assert researcher["tools"] and all(isinstance(tool, BaseTool) for tool in researcher["tools"])
    assert [tool.name for tool in researcher["tools"]] == ["knowledge_search"]


def test_skills_read_allow_precedes_write_deny() -> None:
    """Pitfall 10: first match wins, so the specific allow must come first."""
    rules = agent_factory._permissions()
    assert rules[0].mode == "allow" and "read" in rules[0].operations
    assert any(rule.mode == "deny" for rule in rules[1:])


def test_agent_compiles_with_tools_and_skills() -> None:
    graph = agent_factory.build_agent(build_model(_settings()), checkpointer=None)
    assert "model" in graph.nodes and "tools" in graph.nodes


def test_hitl_tools_accepts_only_framework_tools_the_agent_has() -> None:
    """Tester: ``HITL_TOOLS=execute`` was accepted, yet the agent never has ``execute`` (deepagents
    shows it only with a sandbox backend; the settings page's list lacks it)."""
    from ventapp.agent.hitl_names import FRAMEWORK_TOOLS

    graph = agent_factory.build_agent(build_model(_settings()), checkpointer=None)
    node_tools = list(graph.nodes["tools"].bound.tools_by_name)  # type: ignore[attr-defined]
    shown = agent_factory.shown_tool_names(node_tools, "full")
    assert set(FRAMEWORK_TOOLS) <= set(shown), sorted(set(FRAMEWORK_TOOLS) - set(shown))


async def test_unknown_hitl_tool_fails_the_start_not_every_chat(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from ventapp.agent.runtime import AgentRuntime

    with pytest.raises(ValueError, match="HITL_TOOLS"):
        await AgentRuntime.open(_settings(DATA_DIR=str(tmp_path), HITL_TOOLS="calcualte"))


def test_compaction_off_drops_the_summarisation_middleware(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Invariant 5: CTX_COMPACT_ENABLED=0 goes through the harness profile, never a second middleware."""
    import deepagents.graph as deep_graph

    stacks: list[list[str]] = []
    original = deep_graph.create_agent

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        stacks.append([type(m).__name__ for m in kwargs.get("middleware", [])])
        return original(*args, **kwargs)

    monkeypatch.setattr(deep_graph, "create_agent", spy)
    agent_factory.build_agent(build_model(_settings(MODEL_NAME="compaction-on-model")), None)
    agent_factory.build_agent(
        build_model(_settings(MODEL_NAME="compaction-off-model")), None, compaction_enabled=False
    )
    on, off = stacks[0], stacks[-1]
    assert any("Summarization" in name for name in on)
    assert not any("Summarization" in name for name in off)


def test_sub_agents_pause_through_the_reason_only_middleware_and_no_stock_one() -> None:
    """deepagents builds a sub-agent's stock approval middleware from ``interrupt_on``; ours replace it."""
    from deepagents.middleware.subagents import GENERAL_PURPOSE_SUBAGENT

    from ventapp.agent.approval_middleware import ReasonOnlyApprovalMiddleware

    registry.load_builtin_tools(reload=True)
    assert [spec["name"] for spec in agent_factory._subagent_specs(None, [])] == ["researcher"]
    config = {"calculate": {"allowed_decisions": ["approve", "reject"]}}
    inherited = [object()]
    general, researcher = agent_factory._subagent_specs(config, inherited)
    assert general["name"] == GENERAL_PURPOSE_SUBAGENT["name"] == agent_factory.GENERAL_PURPOSE
    assert general["system_prompt"] == GENERAL_PURPOSE_SUBAGENT["system_prompt"] and "tools" not in general
    assert general["middleware"][0] is inherited[0], "what the default general-purpose one inherits"
    for spec in (general, researcher):
        assert spec["interrupt_on"] == {}, "an empty interrupt_on: deepagents adds no stock middleware"
        (approvals,) = [m for m in spec["middleware"] if isinstance(m, ReasonOnlyApprovalMiddleware)]
        assert approvals.interrupt_on == config
