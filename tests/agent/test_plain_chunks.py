"""Streamed chunks stay the server's JSON (issue 18): same answers, errors and request body as the SDK's path."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage

from tests.agent.test_openai_compat import CALCULATE, _after_a_tool_call, _model
from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.openai_compat import REASONING_KEY, CompatChatOpenAI
from ventapp.agent.plain_chunks import PlainChunkCompletions, as_dumped


@pytest.fixture
def llm() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


async def test_a_streamed_create_yields_the_servers_dicts(llm: ScriptedServer) -> None:
    model = _model(llm.base_url)
    assert isinstance(model.async_client, PlainChunkCompletions)
    llm.push({"content": "Airflow is 20 m³/s."})
    stream = await model.async_client.create(
        model="scripted-demo", messages=[{"role": "user", "content": "q"}], stream=True
    )
    async with stream:
        chunks = [chunk async for chunk in stream]
    assert chunks and all(type(chunk) is dict for chunk in chunks), "no ChatCompletionChunk models"
    text = "".join(
        (chunk["choices"][0]["delta"].get("content") or "") for chunk in chunks if chunk["choices"]
    )
    assert text == "Airflow is 20 m³/s."


async def test_the_request_body_and_extra_body_reach_the_server(llm: ScriptedServer) -> None:
    base = _model(llm.base_url)
    model = CompatChatOpenAI(
        model="scripted-demo",
        api_key="scripted",
        base_url=llm.base_url,
        max_retries=0,
        compat=base.compat,
        extra_body={"chat_template_kwargs": {"enable_thinking": True}},
    )
    merged = None
    async for chunk in model.bind_tools([CALCULATE]).astream([HumanMessage(content="hello")]):
        merged = chunk if merged is None else merged + chunk
    sent = llm.requests()[-1]
    assert sent["chat_template_kwargs"] == {"enable_thinking": True}, "extra_body is merged into the JSON"
    assert sent["stream"] is True and sent["tools"][0]["function"]["name"] == "calculate"
    assert isinstance(merged, AIMessageChunk) and merged.content
    assert merged.additional_kwargs.get(REASONING_KEY), "a thinking request streams reasoning, kept as before"


async def test_an_http_error_while_streaming_is_the_sdks_error() -> None:
    with ScriptedServer(dialect="strict") as strict:
        model = _model(strict.base_url, compat="strict")
        with pytest.raises(openai.InternalServerError):
            async for _chunk in model.astream(_after_a_tool_call()):
                pass


def test_missing_keys_read_as_model_dump_gave_them() -> None:
    model = _model("http://127.0.0.1:9/v1")
    finish_only = {"id": "c", "choices": [{"index": 0, "finish_reason": "stop"}]}
    assert model._convert_chunk_to_generation_chunk(finish_only, AIMessageChunk, None) is None
    call = {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"name": "calculate"}}]}}]}
    assert as_dumped(call)["choices"][0]["delta"]["tool_calls"][0] == {
        "function": {"name": "calculate"},
        "index": None,
    }
