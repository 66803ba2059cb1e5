"""The agent's todo list over real HTTP: ``write_todos`` reaches the model and its list streams back.

deepagents 0.7.32 stopped adding ``TodoListMiddleware`` to its base stack, so the request's
``tools`` lacked ``write_todos`` while the system prompt asked for it, and a model that called
it got "write_todos is not a valid tool". The agent now installs the middleware itself.
"""

from __future__ import annotations

import httpx

from tests.api.sse_client import post_chat
from tests.scripted_llm.script import PLAN_TODOS
from tests.scripted_llm.server import ScriptedServer

TODOS = [
    {"content": "Read the network file", "status": "completed"},
    {"content": "Solve the airflow", "status": "in_progress"},
    {"content": "Check velocities", "status": "pending"},
]


def test_write_todos_is_offered_and_its_list_streams(client: httpx.Client, llm: ScriptedServer) -> None:
    llm.push(
        {"tool_calls": [{"name": "write_todos", "arguments": {"todos": TODOS}}]},
        {"content": "Plan written."},
    )

    response, frames = post_chat(client, message="plan the network study", user_name="todo-user")

    assert response.status_code == 200
    first_request = llm.requests()[0]
    assert "write_todos" in {tool["function"]["name"] for tool in first_request["tools"]}
    lists = [frame for frame in frames if frame["type"] == "updated_todo_list"]
    assert lists and lists[-1]["todos"] == TODOS
    results = [frame for frame in frames if frame["type"] == "tool_result" and frame["tool"] == "write_todos"]
    assert results and not results[0]["error"], results
    assert frames[-1]["type"] == "done"


def test_the_demo_model_writes_a_plan_as_a_todo_list(client: httpx.Client, llm: ScriptedServer) -> None:
    """``make demo``'s model, unscripted: "plan" calls write_todos, then it answers (README's demo list)."""
    llm.reset()

    response, frames = post_chat(client, message="plan the airflow survey", user_name="todo-demo")

    assert response.status_code == 200
    lists = [frame for frame in frames if frame["type"] == "updated_todo_list"]
    assert lists and lists[-1]["todos"] == [{"content": c, "status": s} for c, s in PLAN_TODOS["en"]]
    assert [f["tool"] for f in frames if f["type"] == "tool_call"] == ["write_todos"]
    answer = "".join(frame["content"] for frame in frames if frame["type"] == "token")
    assert answer == "The plan is a todo list of 3 steps." and frames[-1]["type"] == "done"
