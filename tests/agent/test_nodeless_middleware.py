"""The library middleware moved into the model and tool calls still does its work (issue 18)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.agent_factory import build_agent
from ventapp.agent.model_factory import build_model
from ventapp.agent.nodeless_middleware import PARALLEL_TODOS_ERROR
from ventapp.config import load_settings


def _agent(base_url: str) -> Any:
    settings = load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "x"}
    )
    return build_agent(build_model(settings), InMemorySaver(), workspaces_dir=Path(tempfile.mkdtemp()))


async def _turn(graph: Any, config: dict[str, Any], text: str) -> None:
    async for _ in graph.astream({"messages": [{"role": "user", "content": text}]}, config=config):
        pass


async def test_a_tool_call_left_without_a_result_is_answered_in_the_next_request() -> None:
    """A run stopped between a model's tool call and its result: the next model request carries
    an error result for it right after the call (OpenAI-compatible servers refuse the gap)."""
    with ScriptedServer() as llm:
        graph = _agent(llm.base_url)
        config = {"configurable": {"thread_id": "t1", "user_name": "alice"}}
        call = {"name": "calculate", "args": {"expression": "1+1"}, "id": "call_cut", "type": "tool_call"}
        await graph.aupdate_state(
            config,
            {"messages": [HumanMessage("add them"), AIMessage(content="", tool_calls=[call])]},
            as_node="model",
        )
        llm.push({"content": "Sorry, again: 2."})
        await _turn(graph, config, "well?")
        [request] = llm.requests()
    roles = [message["role"] for message in request["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"], roles
    result = request["messages"][3]
    assert result["tool_call_id"] == "call_cut"
    assert "did not complete" in str(result["content"])


async def test_parallel_write_todos_calls_are_refused_and_a_single_one_runs() -> None:
    todo = {"content": "measure the airflow", "status": "in_progress"}
    with ScriptedServer() as llm:
        graph = _agent(llm.base_url)
        config = {"configurable": {"thread_id": "t2", "user_name": "alice"}}
        llm.push(
            {
                "tool_calls": [
                    {"name": "write_todos", "arguments": {"todos": [todo]}},
                    {"name": "write_todos", "arguments": {"todos": [{**todo, "content": "other"}]}},
                ]
            },
            {"content": "I will keep one list."},
        )
        await _turn(graph, config, "plan it")
        refused = (await graph.aget_state(config)).values
        llm.push({"tool_calls": [{"name": "write_todos", "arguments": {"todos": [todo]}}]}, {"content": "ok"})
        await _turn(graph, config, "plan it once")
        kept = (await graph.aget_state(config)).values
        requests = llm.requests()
    results = [message for message in requests[1]["messages"] if message["role"] == "tool"]
    assert len(results) == 2
    assert all(PARALLEL_TODOS_ERROR in str(result["content"]) for result in results)
    assert not refused.get("todos"), "neither parallel call wrote the list"
    assert kept["todos"] == [todo]


async def test_a_thread_left_on_a_question_is_joined_with_the_next_one_in_the_request() -> None:
    """A run cut with no trace in the thread (the process died mid-call): the next request joins the
    two questions rather than send two user messages in a row (strict chat templates refuse that)."""
    with ScriptedServer(dialect="strict") as llm:
        graph = _agent(llm.base_url)
        config = {"configurable": {"thread_id": "t3", "user_name": "alice"}}
        await graph.aupdate_state(config, {"messages": [HumanMessage("first")]}, as_node="model")
        llm.push({"content": "Both answered."})
        await _turn(graph, config, "second")
        [request] = llm.requests()
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert request["messages"][1]["content"] == "first\n\nsecond"
