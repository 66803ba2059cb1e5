"""Tool schemas converted once per tool schema (issue 18): the same figures as the library's, less often.

The product's real tools (the built agent's, deepagents' filesystem tools included) are checked
against langchain's own conversion and token count; a turn against the scripted server shows the
cached schemas are what the model is sent and that nothing writes to them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env
from ventapp.agent import tool_schemas
from ventapp.agent.agent_set import AgentSet
from ventapp.agent.model_factory import build_model
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.tool_schemas import count_tokens_with_tools, openai_tool, summarisation_counters
from ventapp.config import load_settings


@pytest.fixture(scope="module")
def product_tools(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    settings = load_settings(
        {"DATA_DIR": str(tmp_path_factory.mktemp("data")), "DEEP_AGENT_ENV_PRIORITY": "none"}
    )
    graph = AgentSet(settings, InMemorySaver()).get().graph
    tools = list(graph.nodes["tools"].bound.tools_by_name.values())
    assert len(tools) > 15 and {"grep", "solve_ventilation_network", "task"} <= {t.name for t in tools}
    return tools


def _conversation() -> list[Any]:
    usage = {"input_tokens": 900, "output_tokens": 40, "total_tokens": 940}
    return [
        SystemMessage("你是矿井通风工程师的助手。"),
        HumanMessage("计算 3.2 m² 巷道、长 400 m 的风阻"),
        AIMessage(
            "",
            tool_calls=[{"name": "airway_resistance", "args": {"length_m": 400}, "id": "c1"}],
            usage_metadata=usage,
            response_metadata={"model_provider": "openai"},
        ),
        ToolMessage("R = 0.12 N·s²/m⁸", tool_call_id="c1"),
        AIMessage(
            "风阻约 0.12 N·s²/m⁸。", usage_metadata=usage, response_metadata={"model_provider": "openai"}
        ),
    ]


@pytest.mark.parametrize("scaling", [True, False])
@pytest.mark.parametrize("chars_per_token", [4.0, 3.3])
def test_the_count_is_the_librarys_for_the_products_tools(
    product_tools: list[Any], scaling: bool, chars_per_token: float
) -> None:
    messages = _conversation()
    kwargs = {"use_usage_metadata_scaling": scaling, "chars_per_token": chars_per_token}
    expected = count_tokens_approximately(messages, tools=product_tools, **kwargs)
    assert expected > count_tokens_approximately(messages, **kwargs) + 1000, "the tools weigh in the count"
    assert count_tokens_with_tools(messages, tools=product_tools, **kwargs) == expected
    assert count_tokens_with_tools(messages, tools=product_tools, **kwargs) == expected, "cached: the same"
    assert count_tokens_with_tools(messages, **kwargs) == count_tokens_approximately(messages, **kwargs)


def test_the_summarisation_counters_are_langchains_defaults_over_cached_tools(
    product_tools: list[Any],
) -> None:
    counter, partial_counter = summarisation_counters(
        build_model(load_settings({"DEEP_AGENT_ENV_PRIORITY": "none"}))
    )
    messages = _conversation()
    assert counter(messages, tools=product_tools) == count_tokens_approximately(
        messages, tools=product_tools, use_usage_metadata_scaling=True
    )
    assert partial_counter(messages) == count_tokens_approximately(messages, use_usage_metadata_scaling=False)


@pytest.mark.parametrize("strict", [None, True])
def test_openai_schemas_are_the_librarys_and_made_once_per_schema(
    product_tools: list[Any], strict: bool | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for tool in product_tools:
        assert openai_tool(tool, strict) == convert_to_openai_tool(tool, strict=strict), tool.name
    conversions: list[str] = []
    real = tool_schemas.convert_to_openai_tool

    def counting(tool: Any, strict: bool | None = None) -> dict[str, Any]:
        conversions.append(tool.name)
        return real(tool, strict=strict)

    monkeypatch.setattr(tool_schemas, "convert_to_openai_tool", counting)
    grep = next(tool for tool in product_tools if tool.name == "grep")
    # deepagents makes a new grep tool around the same schema at every call: still a hit
    again = StructuredTool(
        name=grep.name, description=grep.description, args_schema=grep.args_schema, func=lambda **_: ""
    )
    assert openai_tool(again, strict) == convert_to_openai_tool(grep, strict=strict)
    for tool in product_tools:
        openai_tool(tool, strict)
    assert conversions == []
    renamed = StructuredTool(
        name=grep.name, description="Search files.", args_schema=grep.args_schema, func=lambda **_: ""
    )
    assert openai_tool(renamed, strict)["function"]["description"] == "Search files."
    assert conversions == ["grep"], "another description is another schema"


def test_bind_tools_binds_what_the_library_binds(product_tools: list[Any]) -> None:
    model = build_model(load_settings({"DEEP_AGENT_ENV_PRIORITY": "none"}))
    ours = model.bind_tools(product_tools, tool_choice="auto", parallel_tool_calls=False)
    theirs = ChatOpenAI.bind_tools(model, product_tools, tool_choice="auto", parallel_tool_calls=False)
    assert ours.kwargs == theirs.kwargs  # type: ignore[attr-defined]


async def test_a_turn_sends_the_cached_schemas_and_leaves_them_as_they_were(tmp_path: Path) -> None:
    with ScriptedServer(delay_ms=0) as llm:
        runtime = await AgentRuntime.open(load_settings(app_env(tmp_path, llm.base_url)))
        try:
            tools = list(runtime.agents.get().graph.nodes["tools"].bound.tools_by_name.values())
            before = {tool.name: copy.deepcopy(openai_tool(tool)) for tool in tools}
            run = await start_chat(runtime, ChatRequest(message="calculate 12*7", user_name="alice"))
            events = [event async for event in run.events()]
        finally:
            await runtime.close()
        assert [e.type for e in events if e.type in ("tool_call", "done")][-1] == "done"
        assert any(e.type == "tool_call" for e in events), "the model called a tool: tools were bound"
        sent = {tool["function"]["name"]: tool for tool in llm.requests()[0]["tools"]}
        for tool in tools:
            assert openai_tool(tool) == before[tool.name], f"{tool.name}'s cached schema was written to"
            if tool.name == "grep":  # rebuilt per call with its own description (no execute tool)
                assert (
                    sent["grep"]["function"]["parameters"]
                    == convert_to_openai_tool(tool)["function"]["parameters"]
                )
            elif tool.name in sent:
                assert sent[tool.name] == convert_to_openai_tool(tool), tool.name
        assert {"calculate", "grep", "task"} <= set(sent)
