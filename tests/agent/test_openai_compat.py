"""The OPENAI_COMPAT layer against scripted servers that behave like real self-hosted ones (issue 19).

``strict`` servers refuse list and ``null`` content (as llama-cpp-python does, with HTTP 500);
``sloppy`` servers repeat a tool call's name in every chunk and send no usage. Each test shows the
defect with ``OPENAI_COMPAT=strict`` (langchain-openai as it is) and its absence with the default.
"""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.errors import classify
from ventapp.agent.model_factory import build_model
from ventapp.agent.openai_compat import CompatChatOpenAI, lenient_message, resolve_compat
from ventapp.config import load_settings

CALCULATE = {
    "type": "function",
    "function": {
        "name": "calculate",
        "description": "Evaluate an arithmetic expression.",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
    },
}


def _model(base_url: str, compat: str = "auto") -> CompatChatOpenAI:
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "scripted",
            "MODEL_NAME": "scripted-demo",
            "MODEL_MAX_RETRIES": "0",
            "OPENAI_COMPAT": compat,
        }
    )
    return build_model(settings)


@pytest.fixture
def strict_llm() -> Iterator[ScriptedServer]:
    with ScriptedServer(dialect="strict") as server:
        yield server


@pytest.fixture
def sloppy_llm() -> Iterator[ScriptedServer]:
    with ScriptedServer(dialect="sloppy") as server:
        yield server


def _after_a_tool_call() -> list:
    return [
        SystemMessage(
            content=[
                {"type": "text", "text": "You are VentAgent."},
                {"type": "text", "text": "\n\nBe brief."},
            ]
        ),
        HumanMessage(content="please calculate (12+8)*3"),
        AIMessage(
            content="", tool_calls=[{"name": "calculate", "args": {"expression": "(12+8)*3"}, "id": "c1"}]
        ),
        ToolMessage(content="60", tool_call_id="c1"),
    ]


@pytest.mark.parametrize(
    ("setting", "base_url", "expected"),
    [
        ("auto", "", "strict"),
        ("auto", "https://api.openai.com/v1", "strict"),
        ("auto", "http://127.0.0.1:8080/v1", "lenient"),
        ("auto", "https://api.deepseek.com/v1", "lenient"),
        ("strict", "http://127.0.0.1:8080/v1", "strict"),
        ("lenient", "", "lenient"),
    ],
)
def test_auto_is_lenient_for_every_endpoint_but_openai(setting: str, base_url: str, expected: str) -> None:
    assert resolve_compat(setting, base_url) == expected


def test_lenient_message_joins_text_parts_and_fills_null_content() -> None:
    parts = {"role": "system", "content": [{"type": "text", "text": "A."}, {"type": "text", "text": "B."}]}
    assert lenient_message(parts)["content"] == "A.\n\nB."
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
    assert lenient_message(call) == {**call, "content": ""}
    image = {
        "role": "user",
        "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {}}],
    }
    assert lenient_message(image) is image, "content with an image stays a list"


async def test_strict_server_refuses_langchains_request_and_accepts_the_lenient_one(
    strict_llm: ScriptedServer,
) -> None:
    with pytest.raises(openai.InternalServerError) as refused:
        await _model(strict_llm.base_url, compat="strict").ainvoke(_after_a_tool_call())
    failure = classify(refused.value)
    assert failure.code == "model_rejected" and "messages[0].content" in failure.message

    strict_llm.reset()
    answer = await _model(strict_llm.base_url).ainvoke(_after_a_tool_call())
    assert answer.content == "The result is 60."
    sent = strict_llm.requests()[-1]["messages"]
    assert sent[0]["content"] == "You are VentAgent.\n\nBe brief."
    assert sent[2]["content"] == "" and sent[2]["tool_calls"][0]["function"]["name"] == "calculate"


async def _streamed_call(model: CompatChatOpenAI, llm: ScriptedServer) -> AIMessage:
    llm.push({"tool_calls": [{"name": "calculate", "arguments": {"expression": "(12+8)*3"}},
                             {"name": "knowledge_search", "arguments": {"query": "fan laws"}}]})  # fmt: skip
    merged = None
    async for chunk in model.bind_tools([CALCULATE]).astream([HumanMessage(content="go")]):
        merged = chunk if merged is None else merged + chunk
    assert merged is not None
    return merged


async def test_repeated_tool_names_are_taken_once_per_call(sloppy_llm: ScriptedServer) -> None:
    broken = await _streamed_call(_model(sloppy_llm.base_url, compat="strict"), sloppy_llm)
    assert broken.tool_calls[0]["name"].startswith("calculatecalculate"), "the defect this layer fixes"

    merged = await _streamed_call(_model(sloppy_llm.base_url), sloppy_llm)
    assert [call["name"] for call in merged.tool_calls] == ["calculate", "knowledge_search"]
    assert merged.tool_calls[0]["args"] == {"expression": "(12+8)*3"}
    assert merged.additional_kwargs["function_call"]["name"] == "calculate", "the legacy delta too"
    assert merged.usage_metadata is None, "the sloppy server sends no usage"


async def test_callbacks_see_the_fixed_chunks(sloppy_llm: ScriptedServer) -> None:
    """LangGraph's "messages" stream is fed by on_llm_new_token: it must get the fixed chunks too."""
    from langchain_core.callbacks import AsyncCallbackHandler

    seen: list = []

    class Collect(AsyncCallbackHandler):
        async def on_llm_new_token(self, token: str, *, chunk=None, **kwargs) -> None:  # type: ignore[no-untyped-def]
            seen.append(chunk.message)

    sloppy_llm.push({"tool_calls": [{"name": "calculate", "arguments": {"expression": "1+1"}}]})
    model = _model(sloppy_llm.base_url).bind_tools([CALCULATE])
    async for _ in model.astream([HumanMessage(content="go")], config={"callbacks": [Collect()]}):
        pass
    merged = seen[0]
    for message in seen[1:]:
        merged = merged + message
    assert [call["name"] for call in merged.tool_calls] == ["calculate"]


async def test_a_base_url_without_its_v1_is_named_as_such_by_a_real_server(llm: ScriptedServer) -> None:
    """try13: a base URL without /v1 got 404 from the server and a sentence about MODEL_NAME."""
    model = _model(llm.base_url.removesuffix("/v1"))
    with pytest.raises(openai.NotFoundError) as raised:
        await model.ainvoke([HumanMessage(content="hello")])
    failure = classify(raised.value)
    assert failure.code == "model_error" and "/chat/completions" in failure.message
    assert "ends in /v1" in failure.message
