"""Reasoning deltas (``reasoning_content`` / ``reasoning``) become ``thinking_token`` frames and are metered (issue 10).

Real HTTP end to end: the scripted server streams reasoning the way DeepSeek, Qwen and
llama.cpp do (``reasoning_content``) or newer vLLM does (``reasoning``); langchain-openai alone
drops both, :class:`~ventapp.agent.openai_compat.CompatChatOpenAI` keeps them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.sse_client import post_chat
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env

REASONING = "The user greets me. A short friendly answer will do."
ANSWER = "Hello there, engineer."


def _reasoning_of(frames: list[dict]) -> str:
    return "".join(frame["content"] for frame in frames if frame["type"] == "thinking_token")


def test_reasoning_content_streams_as_thinking_tokens_before_the_answer(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    llm.push({"content": ANSWER, "reasoning": REASONING})
    response, frames = post_chat(client, message="hello", user_name="reasoner")
    assert response.status_code == 200
    types = [frame["type"] for frame in frames]
    assert _reasoning_of(frames) == REASONING
    assert "".join(f["content"] for f in frames if f["type"] == "token") == ANSWER
    assert types.index("thinking_token") < types.index("token")
    usage = frames[-1]["usage"]
    # The scripted server counts one token per word; its reasoning_tokens reach the footer.
    assert usage["reasoning_tokens"] == len(REASONING.split())
    assert usage["output_tokens"] == len(REASONING.split()) + len(ANSWER.split())


def test_reasoning_before_a_tool_call_is_shown_and_the_call_still_runs(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    llm.push(
        {
            "tool_calls": [{"name": "calculate", "arguments": {"expression": "2+2"}}],
            "reasoning": "Use the calculator.",
        }
    )
    _, frames = post_chat(client, message="what is 2+2, calculate", user_name="reasoner")
    assert _reasoning_of(frames) == "Use the calculator."
    result = next(frame for frame in frames if frame["type"] == "tool_result")
    assert result["content"] == "4" and frames[-1]["type"] == "done"


@pytest.fixture(scope="module")
def vllm_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiServer, ScriptedServer]]:
    with ScriptedServer(dialect="vllm") as server:
        env = app_env(Path(tmp_path_factory.mktemp("vllm")), server.base_url)
        with patched_env(env), ApiServer() as api:
            yield api, server


def test_vllm_reasoning_field_is_read_too(vllm_api: tuple[ApiServer, ScriptedServer]) -> None:
    api, server = vllm_api
    server.push({"content": ANSWER, "reasoning": REASONING})
    with httpx.Client(base_url=api.url, timeout=30) as http:
        _, frames = post_chat(http, message="hello", user_name="reasoner")
    assert _reasoning_of(frames) == REASONING
    assert frames[-1]["usage"]["reasoning_tokens"] == len(REASONING.split())


def test_usage_without_provider_figures_counts_the_reasoning(tmp_path: Path) -> None:
    """A server that reports no usage: the estimate includes the reasoning text (billed, not dropped)."""
    with ScriptedServer(dialect="sloppy") as server, patched_env(app_env(tmp_path, server.base_url)):
        with ApiServer() as api, httpx.Client(base_url=api.url, timeout=30) as http:
            server.push({"content": "ok", "reasoning": "word " * 400})
            _, with_reasoning = post_chat(http, message="hello", user_name="estimates")
            server.push({"content": "ok"})
            _, without = post_chat(http, message="hello", user_name="estimates2")
    thinking, plain = with_reasoning[-1]["usage"], without[-1]["usage"]
    assert thinking["usage_source"] == plain["usage_source"] == "estimate"
    assert thinking["reasoning_tokens"] >= 400
    assert thinking["output_tokens"] >= plain["output_tokens"] + 400
