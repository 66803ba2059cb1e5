"""Failures a run can end with, as data: a code and a sentence a person can act on.

``str(exc)`` is never shown to users (STYLE.md); it goes to the log with the trace id.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import openai
from langchain_core.exceptions import ContextOverflowError

from ventapp.agent.events import ErrorCode


@dataclass(frozen=True)
class RunFailure:
    """A classified failure: ``code`` for programs, ``message`` for people."""

    code: ErrorCode
    message: str


UNCONFIGURED = RunFailure(
    "model_unconfigured",
    "No model is configured. Set OPENAI_BASE_URL, OPENAI_API_KEY and MODEL_NAME in .env "
    "(see .env.example and the README), or run `make demo` for the scripted demo model, then restart.",
)


CANCELLED = RunFailure("cancelled", "Stopped. The partial answer has been kept.")
CLIENT_GONE = RunFailure("cancelled", "The client disconnected; the partial answer has been kept.")
TIMED_OUT = RunFailure(
    "timeout",
    "The run took longer than RUN_TIMEOUT_S allows and was stopped. The partial answer has been kept.",
)


QUOTA_REACHED = RunFailure(
    "quota",
    "Your daily token quota is used up, so the answer was stopped. It resets at midnight (Asia/Shanghai).",
)


def classify(exc: BaseException) -> RunFailure:
    """Map an exception raised while streaming the agent to a :class:`RunFailure`."""
    if isinstance(exc, ContextOverflowError):
        return RunFailure(
            "context_overflow",
            "The conversation no longer fits the model's context window, even after compaction. "
            "Start a new chat, or raise CONTEXT_LIMIT if the model allows more.",
        )
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException | TimeoutError):
        return RunFailure(
            "model_unreachable", "The model did not answer in time. Try again, or check the endpoint."
        )
    if isinstance(exc, openai.APIConnectionError | httpx.ConnectError):
        return RunFailure(
            "model_unreachable",
            "The model endpoint could not be reached. Check OPENAI_BASE_URL and that the server is running.",
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return RunFailure("model_error", "The model endpoint rejected the API key. Check OPENAI_API_KEY.")
    if isinstance(exc, openai.NotFoundError):
        return RunFailure("model_error", "The endpoint does not know this model. Check MODEL_NAME.")
    if isinstance(exc, openai.RateLimitError):
        return RunFailure(
            "model_error", "The model provider is rate-limiting requests. Wait a moment and retry."
        )
    if isinstance(exc, openai.APIStatusError):
        return RunFailure(
            "model_error", f"The model endpoint returned an error (HTTP {exc.status_code}). Try again."
        )
    return RunFailure("internal", "Something went wrong while running the agent. The error has been logged.")
