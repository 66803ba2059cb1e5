"""The scripted OpenAI-compatible server, exercised through the real ``ChatOpenAI`` client."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from markdown_it import MarkdownIt

from tests.scripted_llm import ScriptedServer, ToolCallsReply, rule_reply, script
from tests.scripted_llm.script import extract_expression
from tests.scripted_llm.tokens import split_arguments

ROOT = Path(__file__).resolve().parent.parent
CALC_PROMPT = "please calculate (12+8)*3"


@tool
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression such as "(12+8)*3"."""
    return "60" if expression == "(12+8)*3" else "unknown"


@tool
def knowledge_search(query: str, limit: int = 3) -> str:
    """Search the ventilation knowledge base."""
    return "{}"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    # One server (hence one port) per test: langchain-openai caches its async httpx
    # client per base_url, and a client reused from a previous test's event loop
    # fails with "Event loop is closed".
    with ScriptedServer() as running:
        yield running


def make_model(server: ScriptedServer) -> ChatOpenAI:
    # max_retries=0: the openai client would otherwise retry 5xx answers with backoff.
    return ChatOpenAI(
        base_url=server.base_url,
        api_key="x",
        model="scripted-demo",
        stream_usage=True,
        use_responses_api=False,
        max_retries=0,
    )


def merge(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def raw_stream(server: ScriptedServer, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST a streaming request and return the decoded SSE chunks (checking the [DONE] tail)."""
    with httpx.stream("POST", f"{server.base_url}/chat/completions", json={**body, "stream": True}) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        events = [line.removeprefix("data: ") for line in resp.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return [json.loads(event) for event in events[:-1]]


def tool_spec(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
    }


async def test_astream_tool_call_is_merged_from_split_chunks(server: ScriptedServer) -> None:
    model = make_model(server).bind_tools([calculate])

    chunks = [chunk async for chunk in model.astream(CALC_PROMPT)]

    assert all(isinstance(chunk, AIMessageChunk) for chunk in chunks)
    assert sum(1 for chunk in chunks if chunk.tool_call_chunks) >= 3  # header + at least 2 argument pieces
    full = merge(chunks)
    assert len(full.tool_calls) == 1
    assert full.tool_calls[0]["name"] == "calculate"
    assert full.tool_calls[0]["args"] == {"expression": "(12+8)*3"}
    assert full.response_metadata["finish_reason"] == "tool_calls"
    # prompt: one message of 25 chars → 25 // 4 + 10, plus the tool definitions sent (their JSON's
    # length // 4, as a provider counts them); completion: header chunk + 3 argument pieces.
    tools = len(json.dumps(server.requests()[-1]["tools"])) // 4
    assert tools > 20
    expected = {"input_tokens": 16 + tools, "output_tokens": 4, "total_tokens": 20 + tools}
    with_usage = [i for i, chunk in enumerate(chunks) if chunk.usage_metadata]
    assert len(with_usage) == 1
    # Only langchain's empty end-of-stream marker may follow the usage chunk.
    assert all(not chunk.content and not chunk.tool_call_chunks for chunk in chunks[with_usage[0] :])
    usage = chunks[with_usage[0]].usage_metadata
    assert {key: usage[key] for key in expected} == expected


async def test_tool_result_turn_answers_with_value(server: ScriptedServer) -> None:
    model = make_model(server).bind_tools([calculate])
    call = merge([chunk async for chunk in model.astream(CALC_PROMPT)])
    result = calculate.invoke(call.tool_calls[0]["args"])
    messages = [HumanMessage(CALC_PROMPT), call, ToolMessage(result, tool_call_id=call.tool_calls[0]["id"])]

    answer = merge([chunk async for chunk in model.astream(messages)])

    assert answer.content == "The result is 60."
    assert len(server.requests()) == 2


async def test_plain_text_streams_word_by_word(server: ScriptedServer) -> None:
    chunks = [chunk async for chunk in make_model(server).astream("hi there")]

    texts = [chunk.content for chunk in chunks if chunk.content]
    assert len(texts) == 11
    assert "".join(texts) == "Hello! I am the scripted demo model. You said: hi there"
    usage = merge(chunks).usage_metadata
    assert usage is not None
    assert (usage["input_tokens"], usage["output_tokens"]) == (8 // 4 + 10, 11)


def test_raw_text_stream_shape(server: ScriptedServer) -> None:
    body = {"model": "scripted-demo", "messages": [{"role": "user", "content": "hello"}]}

    chunks = raw_stream(server, {**body, "stream_options": {"include_usage": True}})

    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "Hello! "}
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 11, "completion_tokens": 10, "total_tokens": 21}
    without_usage = raw_stream(server, body)
    assert all("usage" not in chunk for chunk in without_usage)
    assert len(without_usage) == len(chunks) - 1


def test_raw_tool_call_stream_splits_arguments_and_supports_several_calls(server: ScriptedServer) -> None:
    server.push(
        {
            "tool_calls": [
                {"name": "calculate", "arguments": {"expression": "1+1"}},
                {"name": "knowledge_search", "arguments": {"query": "duct sizing", "limit": 3}},
            ]
        }
    )
    body = {"messages": [{"role": "user", "content": "go"}], "tools": [tool_spec("calculate")]}

    chunks = raw_stream(server, body)

    calls: dict[int, dict[str, Any]] = {}
    pieces: dict[int, int] = {}
    for chunk in chunks[:-1]:
        for delta_call in chunk["choices"][0]["delta"].get("tool_calls", []):
            index = delta_call["index"]
            if "id" in delta_call:
                assert delta_call["type"] == "function"
                assert delta_call["function"]["arguments"] == ""
                calls[index] = {"id": delta_call["id"], "name": delta_call["function"]["name"], "args": ""}
            else:
                assert set(delta_call) == {"index", "function"}
                calls[index]["args"] += delta_call["function"]["arguments"]
                pieces[index] = pieces.get(index, 0) + 1
    assert [calls[i]["name"] for i in sorted(calls)] == ["calculate", "knowledge_search"]
    assert json.loads(calls[1]["args"]) == {"query": "duct sizing", "limit": 3}
    assert calls[0]["id"] != calls[1]["id"]
    assert min(pieces.values()) >= 2
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_invoke_non_streaming(server: ScriptedServer) -> None:
    message = make_model(server).invoke("hello")

    assert message.content == "Hello! I am the scripted demo model. You said: hello"
    assert message.usage_metadata is not None
    assert message.usage_metadata["input_tokens"] == 5 // 4 + 10
    assert message.usage_metadata["output_tokens"] == 10
    raw = httpx.post(
        f"{server.base_url}/chat/completions", json={"messages": [{"role": "user", "content": "x"}]}
    )
    assert raw.json()["usage"]["total_tokens"] == (1 // 4 + 10) + 10


def test_invoke_non_streaming_tool_call(server: ScriptedServer) -> None:
    message = make_model(server).bind_tools([calculate, knowledge_search]).invoke("What is a VAV box?")

    assert [call["name"] for call in message.tool_calls] == ["knowledge_search"]
    assert message.tool_calls[0]["args"] == {"query": "a VAV box", "limit": 3}


def test_queued_responses_are_used_fifo(server: ScriptedServer) -> None:
    resp = httpx.post(
        f"{server.url}/_script", json={"responses": [{"content": "first"}, {"content": "second"}]}
    )
    assert resp.json() == {"queued": 2}
    server.push({"tool_calls": [{"name": "anything", "arguments": {"a": 1}}]})
    model = make_model(server)

    assert model.invoke("hello").content == "first"
    assert model.invoke("hello").content == "second"
    assert model.invoke("hello").tool_calls[0]["args"] == {"a": 1}
    assert model.invoke("hello").content.startswith("Hello! I am the scripted demo model.")


def test_delete_script_clears_queue(server: ScriptedServer) -> None:
    server.push({"content": "never used"})
    assert httpx.delete(f"{server.url}/_script").status_code == 200

    assert make_model(server).invoke("hello").content != "never used"


def test_error_rule_raises_in_chat_openai(server: ScriptedServer) -> None:
    with pytest.raises(openai.InternalServerError):
        make_model(server).invoke("error please")
    resp = httpx.post(
        f"{server.base_url}/chat/completions",
        json={"messages": [{"role": "user", "content": "error please"}]},
    )
    assert resp.status_code == 500
    assert resp.json()["error"]["type"] == "server_error"


async def test_queued_error_then_recovery(server: ScriptedServer) -> None:
    server.push({"error": 503, "message": "overloaded"})
    model = make_model(server)

    with pytest.raises(openai.APIStatusError, match="overloaded") as info:
        _ = [chunk async for chunk in model.astream("hello")]
    assert info.value.status_code == 503
    assert (await model.ainvoke("hello")).content.startswith("Hello!")


def test_request_log_counts_calls(server: ScriptedServer) -> None:
    model = make_model(server)
    model.invoke("one")
    list(model.stream("two"))

    logged = server.requests()
    assert [body["messages"][-1]["content"] for body in logged] == ["one", "two"]
    assert logged[1]["stream"] is True
    assert httpx.get(f"{server.url}/_requests").json() == logged
    assert httpx.delete(f"{server.url}/_requests").status_code == 200
    assert server.requests() == []


def test_models_endpoint(server: ScriptedServer) -> None:
    ids = [model["id"] for model in httpx.get(f"{server.base_url}/models").json()["data"]]
    assert ids == ["scripted-demo"]


def test_delay_between_chunks() -> None:
    with ScriptedServer(delay_ms=40) as slow:
        started = time.monotonic()
        chunks = raw_stream(slow, {"messages": [{"role": "user", "content": "hi"}]})
        elapsed = time.monotonic() - started
    assert elapsed >= 0.04 * (len(chunks) - 1)


def user(text: Any) -> dict[str, Any]:
    return {"role": "user", "content": text}


def after_tool(name: str, content: str) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    return {
        "messages": [
            user("q"),
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": content},
        ]
    }


def test_rules_summarise_tool_results() -> None:
    assert rule_reply(after_tool("calculate", "60")).content == "The result is 60."
    assert rule_reply(after_tool("calculate", '{"result": 2.5}')).content == "The result is 2.5."
    found = json.dumps({"data": "Use 4 ACH in offices.", "sources": [{"title": "GB 50736 §3.0.6"}]})
    assert "GB 50736 §3.0.6" in rule_reply(after_tool("knowledge_search", found)).content
    hits = {
        "data": [
            {"title": "Duct noise", "doc_id": "d1", "excerpt": "Keep velocity below 5 m/s.", "score": 1.2}
        ],
        "sources": [{"title": "Duct noise", "url": "kb://d1", "snippet": "Keep velocity", "score": 1.2}],
    }
    answer = rule_reply(after_tool("knowledge_search", json.dumps(hits))).content
    assert (
        answer
        == "According to the knowledge base (source: Duct noise), Keep velocity below 5 m/s. (1 source(s) found.)"
    )
    assert rule_reply(after_tool("read_file", "x" * 300)).content == "Done: " + "x" * 200


def test_a_rejection_reason_is_quoted_with_one_full_stop() -> None:
    assert (
        rule_reply(after_tool("calculate", "Keep the old value.")).content
        == "The result is Keep the old value."
    )


def test_rules_for_user_messages() -> None:
    tools = [tool_spec("calculate"), tool_spec("knowledge_search")]
    parts = [
        {"type": "text", "text": "Calculate 2 * (3 + 4)"},
        {"type": "image_url", "image_url": {"url": "u"}},
    ]
    assert rule_reply({"messages": [user(parts)], "tools": tools}).calls[0].arguments == {
        "expression": "2 * (3 + 4)"
    }
    search = rule_reply({"messages": [user("search duct noise")], "tools": tools}).calls[0]
    assert (search.name, search.arguments) == ("knowledge_search", {"query": "duct noise", "limit": 3})
    unavailable = rule_reply({"messages": [user("calculate 1+1")]})
    assert "not available" in unavailable.content
    assert rule_reply({"messages": [user("show me")], "tools": tools}).content.startswith("Hello!")
    assert len(rule_reply({"messages": [user("a long answer")]}).content.split()) == 200
    markdown = rule_reply({"messages": [user("markdown")]}).content
    assert all(marker in markdown for marker in ("# ", "\n- ", "| --- |", "```python\n", "\n```"))
    assert rule_reply({"messages": [user("error please")]}).status == 500


def test_the_echo_keeps_the_messages_line_breaks_as_the_chat_renders_it() -> None:
    """The demo model's echo of a multi-line message read as one line in the chat (Markdown
    turns a lone newline into a space): each line break is a hard break, blank lines stay."""
    said = rule_reply({"messages": [user("first line\r\nsecond line\n\nnew paragraph")]}).content
    html = MarkdownIt("commonmark").render(said)
    assert html == (
        "<p>Hello! I am the scripted demo model. You said: first line<br />\nsecond line</p>\n"
        "<p>new paragraph</p>\n"
    )
    one_line = rule_reply({"messages": [user("hi there")]}).content
    assert one_line == "Hello! I am the scripted demo model. You said: hi there", "unchanged"


def test_plan_rule_writes_todos_in_the_ui_language_then_answers() -> None:
    tools = [tool_spec("write_todos"), tool_spec("calculate")]
    chinese = {"role": "system", "content": "Interface language: 简体中文 (zh-CN)."}
    call = rule_reply({"messages": [user("plan the airflow survey")], "tools": tools}).calls[0]
    assert call.name == "write_todos" and call.arguments["todos"][1] == {
        "content": "Calculate the required airflow",
        "status": "in_progress",
    }
    zh = rule_reply({"messages": [chinese, user("请做一个通风计划")], "tools": tools}).calls[0]
    assert zh.arguments["todos"][0] == {"content": "收集巷道数据", "status": "completed"}
    assert rule_reply({"messages": [user("explanation please")], "tools": tools}).content.startswith("Hello!")
    done = {"role": "tool", "tool_call_id": "t1", "content": "Updated todo list"}
    asked = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "t1", "function": {"name": "write_todos"}}],
    }
    assert (
        rule_reply({"messages": [user("plan"), asked, done]}).content == "The plan is a todo list of 3 steps."
    )


def test_rules_detect_summarisation_call() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "Please summarize the conversation."},
            user("search for how to calculate things"),
        ]
    }
    assert rule_reply(body).content.startswith("Summary:")
    assert isinstance(rule_reply({**body, "tools": [tool_spec("calculate")]}), ToolCallsReply)


def test_expression_and_argument_splitting() -> None:
    assert extract_expression(CALC_PROMPT) == "(12+8)*3"
    assert extract_expression("no numbers here") == ""
    args = json.dumps({"expression": "(12+8)*3"})
    assert len(split_arguments(args)) == 3
    assert "".join(split_arguments(args)) == args
    assert len(split_arguments("{}")) == 2


def test_cli_announces_and_serves() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.scripted_llm", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("scripted-llm listening on http://127.0.0.1:")
        assert line.endswith("/v1")
        base_url = line.rsplit(" ", 1)[1]
        assert httpx.get(f"{base_url}/models", timeout=5).json()["data"][0]["id"] == "scripted-demo"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_rules_answer_in_the_ui_language_named_in_the_system_prompt() -> None:
    from ventapp.agent.middleware import LANGUAGE_NOTES

    system = {"role": "system", "content": "You are VentAgent.\n\n" + LANGUAGE_NOTES["zh-CN"]}
    tools = [
        {"type": "function", "function": {"name": "calculate"}},
        {"function": {"name": "knowledge_search"}},
    ]
    asked = script.rule_reply(
        {"messages": [system, {"role": "user", "content": "请计算 (12+8)*3"}], "tools": tools}
    )
    assert asked == script.ToolCallsReply(
        calls=(script.ToolCallSpec("calculate", {"expression": "(12+8)*3"}),)
    )
    searched = script.rule_reply(
        {"messages": [system, {"role": "user", "content": "什么是风机定律"}], "tools": tools}
    )
    assert isinstance(searched, script.ToolCallsReply) and searched.calls[0].name == "knowledge_search"
    call = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "calculate"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": '{"result": 60}'}
    assert script.rule_reply({"messages": [system, call, result]}) == script.TextReply("结果是 60。")
    english = {"role": "system", "content": LANGUAGE_NOTES["en"]}
    assert script.rule_reply({"messages": [english, call, result]}) == script.TextReply("The result is 60.")
    assert script.ui_language([{"role": "user", "content": "Interface language: x (zh-CN)"}]) == "en"


def test_a_named_mcp_tool_is_called_with_the_json_after_its_name() -> None:
    from tests.scripted_llm.named_call import named_tool_call

    offered = {"site__read_airflow", "calculate"}
    assert named_tool_call('use site__read_airflow {"airway": "A7"} now', offered) == (
        "site__read_airflow",
        {"airway": "A7"},
    )
    assert named_tool_call("use site__read_airflow", offered) == ("site__read_airflow", {})
    assert named_tool_call("use web__read_airflow", offered) is None, "only offered tools"
    assert named_tool_call("use site__read_airflow {broken", offered) == ("site__read_airflow", {})


def test_the_network_demo_reads_total_airflow_and_says_a_refusal_whole() -> None:
    """Tester: "total airflow" (the refusal's own words) was not understood; the refusal was cut."""
    from tests.scripted_llm.network_demo import network_call, summarise_network

    for text in (
        "solve /workspace/uploads/a.csv, total airflow 151.295",
        "求解 /workspace/uploads/a.csv 总风量 151.295",
    ):
        assert network_call(text) == {"path": "/workspace/uploads/a.csv", "total_flow": 151.295}
    refusal = (
        "Tool 'solve_ventilation_network' failed: [no_driver] " + "Nothing drives the air. " * 20 + "(end)"
    )
    assert summarise_network(refusal, "en") == f"The solver did not run: {refusal}"


def test_the_network_demo_finds_an_attached_name_with_blanks_as_the_pipeline_lists_it() -> None:
    """Tester: ``红砂岗 一号矿 网络(A)#1 & v2.csv`` was attached, but the demo never called the solver."""
    from tests.scripted_llm.network_demo import network_call
    from ventapp.agent.turn_attachments import note_for

    name = "/workspace/uploads/红砂岗 一号矿 网络(A)#1 & v2.csv"
    notes = "/workspace/uploads/notes, draft.txt"
    for paths in ([name], [notes, name, "/workspace/uploads/b.csv"]):
        text = "解算这个通风网络，总风量 151.295\n\n" + note_for(paths)
        assert network_call(text) == {"path": name, "total_flow": 151.295}, paths
    assert network_call("solve it\n\n" + note_for([notes])) is None, "no network file attached"


def test_the_network_demo_says_a_refusal_in_chinese_without_the_models_english() -> None:
    """Tester (71_badnet): the Chinese answer carried "Tool '…' failed:" and "(topology.csv lacks …)"."""
    from tests.scripted_llm.network_demo import summarise_network

    refusal = (
        "Tool 'solve_ventilation_network' failed: [missing_column] 拓扑文件缺少必需的列（edge_id、from、to、"
        "r_N_s2_m8）。 (topology.csv lacks the column(s) 'r_N_s2_m8'; required: edge_id, from, to, "
        "r_N_s2_m8 (optional: name, adjust_r).)."
    )
    assert summarise_network(refusal, "zh-CN") == (
        "解算未完成：拓扑文件缺少必需的列（edge_id、from、to、r_N_s2_m8）。"
    )
