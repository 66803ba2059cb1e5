"""Reasoning deltas (``reasoning_content`` / ``reasoning``) become ``thinking_token`` frames, are metered
(issue 10) and kept with the answer (``GET /api/chat/history``).

Real HTTP end to end: the scripted server streams reasoning the way DeepSeek, Qwen and
llama.cpp do (``reasoning_content``) or newer vLLM does (``reasoning``); langchain-openai alone
drops both, :class:`~ventapp.agent.openai_compat.CompatChatOpenAI` keeps them.
"""

from __future__ import annotations

import time
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


def _history(client: httpx.Client, session_id: str, user: str = "default") -> list[dict]:
    return client.get(f"/api/chat/history/{session_id}", params={"user_name": user}).json()["messages"]


def test_the_answer_keeps_its_reasoning_a_paragraph_per_model_call(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    """A re-read answer had lost its reasoning block; it is stored now, as the live one showed it."""
    llm.push(
        {
            "tool_calls": [{"name": "calculate", "arguments": {"expression": "2+2"}}],
            "reasoning": "Use the calculator.",
        },
        {"content": "It is 4.", "reasoning": "The calculator said 4."},
    )
    response, frames = post_chat(client, message="what is 2+2, calculate", user_name="reasoner")
    assert frames[-1]["type"] == "done"
    question, answer = _history(client, response.headers["x-session-id"], "reasoner")
    assert answer["reasoning"] == "Use the calculator.\n\nThe calculator said 4."
    assert answer["content"] == "It is 4." and question["reasoning"] == ""


def test_a_stopped_answer_keeps_the_reasoning_streamed_so_far(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    long_thought = " ".join(f"step{i}" for i in range(400))
    llm.push({"content": ANSWER, "reasoning": long_thought})
    llm.delay_ms = 10
    try:
        with client.stream("POST", "/api/chat", files={"message": (None, "think hard")}) as response:
            session_id = response.headers["x-session-id"]
            thoughts = 0
            for line in response.iter_lines():
                thoughts += '"type":"thinking_token"' in line
                if thoughts >= 5:
                    break  # the client leaves: the run is cancelled, its partial answer saved
    finally:
        llm.delay_ms = 0
    deadline = time.monotonic() + 15
    while (messages := _history(client, session_id))[-1]["role"] != "assistant":
        assert time.monotonic() < deadline, "the run never finalised"
        time.sleep(0.1)
    answer = messages[-1]
    assert answer["status"] == "cancelled"
    assert answer["reasoning"].startswith("step0 step1 step2 step3 step4")
    assert long_thought.startswith(answer["reasoning"]) and answer["reasoning"] != long_thought


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
