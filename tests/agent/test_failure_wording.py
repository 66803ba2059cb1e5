"""Every model-endpoint failure reads in the person's language (tester #5, try12).

The API's ``error`` frame (``message`` by Accept-Language, Chinese by default) and the UI's operator
detail word the sentence; the provider's own reason stays as it said it, and English stays the run's sentence.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import openai
import pytest
from langchain_core.exceptions import ContextOverflowError

from tests.api.sse_client import read_frames
from tests.scripted_llm.server import ScriptedServer
from ventapp.agent import events as ev
from ventapp.agent.errors import classify
from ventapp.api.wording import needs_wording, worded
from ventapp.state.views import worded_error

_CJK = re.compile(r"[\u4e00-\u9fff]")


def _status_error(status: int, body: Any) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
    response = httpx.Response(status, request=request, json=body)
    cls = {401: openai.AuthenticationError, 403: openai.PermissionDeniedError, 404: openai.NotFoundError,
           429: openai.RateLimitError}.get(status, openai.InternalServerError if status >= 500 else
                                            openai.BadRequestError)  # fmt: skip
    return cls(f"Error code: {status}", response=response, body=body)


_REQUEST = httpx.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
FAILURES: dict[str, tuple[BaseException, str | None]] = {
    "401": (_status_error(401, {"message": "bad key sk-abcdefgh"}), None),
    "403": (_status_error(403, {"message": "forbidden"}), None),
    "404 with a reason": (
        _status_error(404, {"message": "model 'qwen-x' not found"}),
        "model 'qwen-x' not found",
    ),
    "404 without": (_status_error(404, None), None),
    "429": (_status_error(429, {"message": "slow down"}), "slow down"),
    "503 without": (_status_error(503, None), None),
    "500 unexplained": (_status_error(500, None), None),
    "500 with a reason": (_status_error(500, {"message": "CUDA out of memory"}), "CUDA out of memory"),
    "400 rejected": (_status_error(400, {"message": "tools are not supported"}), "tools are not supported"),
    "timeout": (openai.APITimeoutError(request=_REQUEST), None),
    "context too long": (ContextOverflowError("too long"), None),
    "mid-answer": (
        openai.APIError("stream error: kv cache full", _REQUEST, body=None),
        "stream error: kv cache full",
    ),
}


@pytest.mark.parametrize("name", FAILURES)
def test_a_model_failure_reads_in_chinese_in_the_api_and_the_ui(name: str) -> None:
    exc, reason = FAILURES[name]
    failure = classify(exc)
    assert failure.code.startswith(("model_", "context_")), failure
    frame = ev.Error(message=failure.message, code=failure.code)
    zh, en = worded(frame, "zh-CN"), worded(frame, "en")
    assert isinstance(zh, ev.Error) and isinstance(en, ev.Error)
    assert _CJK.search(zh.message) and zh.code == failure.code, zh.message
    assert en.message == failure.message and needs_wording(frame, "zh-CN") and not needs_wording(frame, "en")
    detail = worded_error(failure.code, failure.message, "zh-CN")[1]
    assert detail == zh.message, "the UI's operator detail reads as the API words it"
    assert worded_error(failure.code, failure.message, "en")[1] == failure.message
    if reason is not None:  # the server's own words are quoted as it said them
        assert reason in zh.message and reason in failure.message
    assert "sk-abcdefgh" not in zh.message


def test_the_key_and_the_setting_names_stay_in_the_chinese_sentence() -> None:
    failure = classify(_status_error(401, {"message": "nope"}))
    assert "OPENAI_API_KEY" in worded_error(failure.code, failure.message, "zh-CN")[1]
    failure = classify(_status_error(404, None))
    zh = worded_error(failure.code, failure.message, "zh-CN")[1]
    assert "MODEL_NAME" in zh and "OPENAI_BASE_URL" in zh and "404" in zh


def test_a_sentence_of_its_own_under_a_model_code_stays_as_written() -> None:
    own = ev.Error(message="The model server failed (HTTP 500): boom.", code="model_error")
    assert worded(own, "zh-CN") is own and not needs_wording(own)
    assert worded_error("model_busy", "upstream said: busy", "zh-CN")[1] == "upstream said: busy"


def test_the_api_words_a_404_from_the_model_server_in_chinese_by_default(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    """Tester #5's curl: ``-F message=你好`` got ``"message":"The endpoint does not know this model or path (HTTP 404)…"``."""
    frames = {}
    for accept in (None, "en"):
        llm.push({"error": 404, "message": "model 'x' not found"})
        headers = {"Accept-Language": accept} if accept else {}
        with client.stream(
            "POST", "/api/chat", files={"message": (None, "你好")}, headers=headers
        ) as response:
            frames[accept] = read_frames(response)[-1]
    zh, en = frames[None], frames["en"]
    assert zh["type"] == en["type"] == "error" and zh["code"] == en["code"] == "model_error"
    assert zh["message"].startswith("模型服务不认识这个模型名或路径（HTTP 404）：model 'x' not found。"), zh
    assert en["message"].startswith(
        "The endpoint does not know this model or path (HTTP 404): model 'x' not found"
    )


def test_a_base_url_without_its_v1_is_the_bubbles_line_not_the_generic_one() -> None:
    """Tester: a 404 at ``http://host:8000/chat/completions`` read "模型服务在当前设置下拒绝工作。", the
    /v1 sentence only under "给运维人员的详情"; the actionable sentence is the line, and no details
    block repeats it."""
    request = httpx.Request("POST", "http://127.0.0.1:8080/chat/completions")
    for body, reason in (({"detail": "Not Found"}, "Not Found"), (None, None)):
        response = httpx.Response(404, request=request, json=body)
        failure = classify(openai.NotFoundError("Error code: 404", response=response, body=body))
        zh = worded(ev.Error(message=failure.message, code=failure.code), "zh-CN")
        assert isinstance(zh, ev.Error)
        plain, detail = worded_error(failure.code, failure.message, "zh-CN")
        assert plain == zh.message and "/v1 结尾" in plain and "拒绝工作" not in plain
        assert detail == "", "the line is the sentence: no details block saying it again"
        assert (reason or "") in plain
        plain_en = worded_error(failure.code, failure.message, "en")[0]
        assert plain_en == failure.message and "ends in /v1" in plain_en
    key = classify(_status_error(401, {"message": "nope"}))
    assert worded_error(key.code, key.message, "zh-CN")[0] == "模型服务在当前设置下拒绝工作。", (
        "others as before"
    )
