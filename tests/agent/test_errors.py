"""Provider errors say what happened and whether sending the message again can help (issue 19)."""

from __future__ import annotations

from typing import Any

import httpx
import httpx2
import openai
import pytest

from ventapp.agent.errors import (
    RETRYABLE_CODES,
    classify,
    failure_wording,
    fixed_failure_key,
    provider_reason,
)

# The body llama-cpp-python 0.3.36 answers (HTTP 500) to a system message whose content is a list.
LLAMA_CPP_VALIDATION = {
    "message": "10 validation errors:\n  {'type': 'string_type', 'loc': ('body', 'messages', 0, "
    "'ChatCompletionRequestSystemMessage', 'content'), 'msg': 'Input should be a valid string', "
    "'input': [{'type': 'text', 'text': 'You are VentAgent'}]}\n  {'type': 'literal_error', 'loc': "
    "('body', 'messages', 0, 'ChatCompletionRequestUserMessage', 'role'), 'msg': \"Input should be "
    "'user'\", 'input': 'system'}\n\n  File \"/srv/llama_cpp/server/app.py\", line 376",
    "type": "internal_server_error",
    "param": None,
    "code": None,
}


def _status_error(status: int, body: Any) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
    response = httpx.Response(status, request=request, json=body)
    cls = {400: openai.BadRequestError, 401: openai.AuthenticationError, 404: openai.NotFoundError,
           429: openai.RateLimitError}.get(status, openai.InternalServerError if status >= 500 else
                                            openai.APIStatusError)  # fmt: skip
    return cls(f"Error code: {status}", response=response, body=body)


def test_llama_cpp_validation_500_is_a_rejection_that_names_the_field() -> None:
    failure = classify(_status_error(500, LLAMA_CPP_VALIDATION))
    assert failure.code == "model_rejected"
    assert failure.message.startswith(
        "The model server rejected the request (HTTP 500): 10 validation errors"
    )
    assert "messages[0].content: Input should be a valid string" in failure.message
    assert "Try again" not in failure.message and "will not help" in failure.message
    assert "You are VentAgent" not in failure.message and "File " not in failure.message


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (429, {"message": "Rate limit reached for requests"}),
        (503, {"message": "Service Unavailable"}),
        (502, None),
        (500, {"message": "The server is overloaded or not ready yet."}),
    ],
)
def test_overload_and_rate_limits_are_retryable(status: int, body: Any) -> None:
    failure = classify(_status_error(status, body))
    assert failure.code == "model_busy" and f"HTTP {status}" in failure.message
    assert "send the message again" in failure.message


def test_a_4xx_is_a_rejection_with_the_providers_reason() -> None:
    body = {"detail": [{"loc": ["body", "messages", 1, "content"], "msg": "Field required"}]}
    failure = classify(_status_error(400, {"message": "'tools' is not supported by this model"}))
    assert failure.code == "model_rejected" and "'tools' is not supported by this model" in failure.message
    fastapi = classify(_status_error(422, body))
    assert fastapi.code == "model_rejected" and "messages[1].content: Field required" in fastapi.message


def test_an_unexplained_500_is_a_server_failure_worth_another_try() -> None:
    """Tester: "error please" to the demo model (HTTP 500) read "refused to work with the current
    settings" with no Retry; a 5xx that names no fault of the request is the server's own failure."""
    failure = classify(_status_error(500, {"message": "Internal Server Error"}))
    assert failure.code == "model_failed" and "HTTP 500" in failure.message
    assert "Send the message again" in failure.message and "log" in failure.message
    assert failure.code in RETRYABLE_CODES
    for status in (401, 403, 404, 400):  # settings or request problems stay as they were
        assert classify(_status_error(status, {"message": "no"})).code not in RETRYABLE_CODES


def test_reason_is_sanitised_and_short() -> None:
    body = {"message": "bad key sk-proj-abcdefghijklmnop1234 \x1b[31mred\x00 " + "x" * 500}
    reason = provider_reason(_status_error(400, body))
    assert "abcdefghijklmnop1234" not in reason and "sk-proj…" in reason
    assert "\x1b" not in reason and "\x00" not in reason and len(reason) <= 200


def test_auth_errors_never_echo_the_key() -> None:
    failure = classify(_status_error(401, {"message": "Incorrect API key provided: sk-abcd****wxyz"}))
    assert (
        failure.code == "model_error" and "OPENAI_API_KEY" in failure.message and "sk-" not in failure.message
    )


@pytest.mark.parametrize("transport", [httpx, httpx2])
def test_connection_lost_mid_stream_is_readable_and_retryable(transport: Any) -> None:
    request = httpx.Request("POST", "http://127.0.0.1:1/v1")
    try:  # how the openai client reports a stream whose server died: the transport error is the cause
        try:
            raise transport.RemoteProtocolError(
                "peer closed connection without sending complete message body"
            )
        except transport.RemoteProtocolError as err:
            raise openai.APIConnectionError(request=request) from err
    except openai.APIConnectionError as wrapped:
        failure = classify(wrapped)
    assert failure.code == "model_unreachable" and "broke off" in failure.message
    refused = classify(openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1:1/v1")))
    assert refused.code == "model_unreachable" and "OPENAI_BASE_URL" in refused.message
    # try11: both quote nothing of the server, so the API and the UI word them (Chinese by default),
    # and a MODELS route's own base_url is named too.
    assert "base_url in MODELS" in refused.message
    assert fixed_failure_key(refused.code, refused.message) == "run_error.model_unreachable"
    assert fixed_failure_key(failure.code, failure.message) == "run_error.model_broke_off"


def test_a_404_at_a_path_without_a_version_says_the_base_url_lacks_its_v1() -> None:
    """try13: OPENAI_BASE_URL=http://host:8000 (no /v1) read only "Check MODEL_NAME and OPENAI_BASE_URL"."""
    request = httpx.Request("POST", "http://127.0.0.1:8080/chat/completions")
    response = httpx.Response(404, request=request, json={"detail": "Not Found"})
    failure = classify(
        openai.NotFoundError("Error code: 404", response=response, body={"detail": "Not Found"})
    )
    assert failure.code == "model_error" and failure.code not in RETRYABLE_CODES
    assert "/chat/completions" in failure.message and "ends in /v1" in failure.message
    assert failure_wording(failure.code, failure.message) == (
        "run_error.model_path_not_found.reason",
        {"path": "/chat/completions", "reason": "Not Found"},
    )
    versioned = classify(_status_error(404, {"message": "model 'gpt-9' not found"}))  # /v1/chat/completions
    assert "MODEL_NAME" in versioned.message and "/v1" not in versioned.message
