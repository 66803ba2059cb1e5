"""Failures a run can end with, as data: a code and a sentence a person can act on.

``str(exc)`` is never shown to users (STYLE.md); it goes to the log with the trace id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from langchain_core.exceptions import ContextOverflowError

from ventapp.agent.events import ErrorCode
from ventapp.i18n import MESSAGES
from ventapp.i18n.templates import template_pattern

_EN = MESSAGES["en"]
"""The English catalogue: a model failure's sentence is its English message (the agent never calls ``t``)."""


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
SERVER_STOPPING = RunFailure(
    "cancelled", "The server is shutting down, so the answer was stopped. The partial answer has been kept."
)
TIMED_OUT = RunFailure(
    "timeout",
    "The run took longer than RUN_TIMEOUT_S allows and was stopped. The partial answer has been kept.",
)


QUOTA_REACHED = RunFailure(
    "quota",
    "Your daily token quota is used up, so the answer was stopped. It resets at midnight (Asia/Shanghai).",
)


INTERNAL = RunFailure("internal", "Something went wrong while running the agent. The error has been logged.")
STORAGE_FAILED = RunFailure(
    "storage",
    "The answer could not be saved because the database is not taking writes right now. It is kept "
    "on the server and will appear in this chat once the database is back.",
)
"""The ``error`` frame a run ends with when its answer was parked instead of saved."""
SHUTDOWN = RunFailure(
    "cancelled",
    "The server shut down while this scheduled run was in progress; the partial answer has been kept.",
)
"""A scheduled run stopped because the process is shutting down (:mod:`ventapp.scheduler.execution`)."""

MODEL_UNREACHABLE = RunFailure(
    "model_unreachable",
    "The model endpoint could not be reached. Check the route's base URL (OPENAI_BASE_URL, or its "
    "base_url in MODELS) and that the server is running.",
)
"""No connection to the model server (refused, no route, DNS, TLS)."""
MODEL_BROKE_OFF = RunFailure(
    "model_unreachable",
    "The connection to the model server broke off in the middle of the answer (the server "
    "stopped or restarted). The partial answer has been kept; send the message again once "
    "the server is back.",
)
"""The model server's connection ended mid-answer."""
KEY_REJECTED = RunFailure("model_error", _EN["run_error.model_key_rejected"])
"""401/403 from the model server (its reason left out: providers echo parts of the key they refused)."""
MODEL_TIMED_OUT = RunFailure("model_unreachable", _EN["run_error.model_timeout"])
"""The model server did not answer within the client's timeout."""
CONTEXT_OVERFLOW = RunFailure("context_overflow", _EN["run_error.context_overflow"])
"""The conversation does not fit the model's context window, even after compaction."""

CANCELLED_EARLY = RunFailure("cancelled", _EN["run_error.cancelled.early"])
CLIENT_GONE_EARLY = RunFailure("cancelled", _EN["run_error.client_gone.early"])
SERVER_STOPPING_EARLY = RunFailure("cancelled", _EN["run_error.server_stopping.early"])
TIMED_OUT_EARLY = RunFailure("timeout", _EN["run_error.timeout.early"])
SHUTDOWN_EARLY = RunFailure("cancelled", _EN["run_error.shutdown.early"])
_EARLY: dict[RunFailure, RunFailure] = {
    CANCELLED: CANCELLED_EARLY,
    CLIENT_GONE: CLIENT_GONE_EARLY,
    SERVER_STOPPING: SERVER_STOPPING_EARLY,
    TIMED_OUT: TIMED_OUT_EARLY,
    SHUTDOWN: SHUTDOWN_EARLY,
}
"""Stops whose sentence says "the partial answer has been kept", and their words for a run stopped
before it wrote anything (try18: "已保留目前的部分回答" over an answer that was only "[stopped]")."""


def before_any_answer(failure: RunFailure) -> RunFailure:
    """``failure`` as worded for a run that ended before any answer text, reasoning or tool card.

    Args:
        failure: How the run ended.

    Returns:
        The "before any answer was written" variant of a stop that promises a kept partial answer;
        any other failure unchanged.
    """
    return _EARLY.get(failure, failure)


FIXED_FAILURES: dict[RunFailure, str] = {
    UNCONFIGURED: "run_error.model_unconfigured",
    CANCELLED: "run_error.cancelled",
    CLIENT_GONE: "run_error.client_gone",
    TIMED_OUT: "run_error.timeout",
    QUOTA_REACHED: "run_error.quota",
    STORAGE_FAILED: "run_error.storage",
    INTERNAL: "run_error.internal",
    SHUTDOWN: "run_error.shutdown",
    SERVER_STOPPING: "run_error.server_stopping",
    MODEL_UNREACHABLE: "run_error.model_unreachable",
    MODEL_BROKE_OFF: "run_error.model_broke_off",
    KEY_REJECTED: "run_error.model_key_rejected",
    MODEL_TIMED_OUT: "run_error.model_timeout",
    CONTEXT_OVERFLOW: "run_error.context_overflow",
    CANCELLED_EARLY: "run_error.cancelled.early",
    CLIENT_GONE_EARLY: "run_error.client_gone.early",
    SERVER_STOPPING_EARLY: "run_error.server_stopping.early",
    TIMED_OUT_EARLY: "run_error.timeout.early",
    SHUTDOWN_EARLY: "run_error.shutdown.early",
}
"""Failures whose sentence is fixed, and the catalogue id that words it (its English is the same text)."""
_FIXED_KEYS = {(failure.code, failure.message): key for failure, key in FIXED_FAILURES.items()}


SERVER_STOPS = frozenset({SERVER_STOPPING, SHUTDOWN, SERVER_STOPPING_EARLY, SHUTDOWN_EARLY})
"""Stops that were not the person's: the server shut down under the answer (or before its text)."""


def server_stop_key(code: str, message: str) -> str | None:
    """The catalogue id of a run's ending when the server stopped it (:data:`SERVER_STOPS`), else None."""
    key = fixed_failure_key(code, message)
    return key if any(FIXED_FAILURES[stop] == key for stop in SERVER_STOPS) else None


def fixed_failure_key(code: str, message: str) -> str | None:
    """The catalogue id that words a fixed failure, for its ``(code, message)`` as a run ended with it.

    The one lookup behind the API's worded ``error`` frames and the UI's operator detail.

    Args:
        code: The error code (``cancelled``, ``quota`` …).
        message: The run's own English sentence, exactly as it was sent or stored.

    Returns:
        e.g. ``"run_error.client_gone"``; None for any other sentence (a model server's words, a
        sentence of its own), which stays as it is.
    """
    return _FIXED_KEYS.get((code, message))


QUOTING_FAILURES: dict[str, ErrorCode] = {
    "run_error.model_not_found": "model_error",
    "run_error.model_path_not_found": "model_error",
    "run_error.model_busy": "model_busy",
    "run_error.model_rejected": "model_rejected",
    "run_error.model_failed": "model_failed",
    "run_error.model_stream_error": "model_failed",
}
"""Model failures whose sentence names the HTTP status (``{status}``) and, when the server gave one, its
reason (the catalogue id ``<key>.reason``, ``{reason}``): catalogue id -> error code."""


def _pattern(template: str) -> re.Pattern[str]:
    """A catalogue sentence as a pattern that reads its placeholders back (``{status}`` three digits, ``{path}`` no space)."""
    return template_pattern(template, values=(("status", r"\d{3}"), ("path", r"\S+")))


_QUOTING_PATTERNS = [
    (code, variant, _pattern(_EN[variant]))
    for key, code in QUOTING_FAILURES.items()
    for variant in (key, f"{key}.reason")
]


def _quoting(key: str, reason: str, **fields: object) -> RunFailure:
    """The failure ``key`` names, its English sentence quoting ``reason`` when there is one."""
    variant = f"{key}.reason" if reason else key
    return RunFailure(QUOTING_FAILURES[key], _EN[variant].format(reason=reason, **fields))


def failure_wording(code: str, message: str) -> tuple[str, dict[str, str]] | None:
    """The catalogue id and fields that word a run's failure in any language, or None.

    The one lookup behind the API's worded ``error`` frames and the UI's operator detail: a fixed
    failure (:func:`fixed_failure_key`, no fields) or a model failure that quotes the HTTP status and
    the server's reason (:data:`QUOTING_FAILURES`; the reason stays in the server's own words).

    Args:
        code: The error code (``model_busy``, ``cancelled`` …).
        message: The run's own English sentence, exactly as it was sent or stored.

    Returns:
        e.g. ``("run_error.model_busy.reason", {"status": "429", "reason": "slow down"})``; None for
        any other sentence (one of its own), which stays as it is.
    """
    key = fixed_failure_key(code, message)
    if key is not None:
        return key, {}
    for each_code, variant, pattern in _QUOTING_PATTERNS:
        if each_code == code and (match := pattern.fullmatch(message)):
            return variant, match.groupdict()
    return None


RETRYABLE_CODES = frozenset(
    {"model_unreachable", "model_busy", "model_failed", "busy", "not_ready", "conflict"}
)
"""Error codes after which sending the same message again can help (README, "When the model server
fails"): the model was unreachable, busy or failed on its side (a 5xx that names no fault of the
request), the server or the session was busy, or not started yet. Every other code (``model_error``:
key or model name; ``model_rejected``, ``quota``, ``context_overflow`` …) needs something changed
first, so clients offer no Retry for it."""

_REASON_MAX_CHARS = 200
_SECRET = re.compile(r"(sk-[A-Za-z0-9_-]{4})[A-Za-z0-9_*-]+|(Bearer\s+)\S+", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e]+")
# pydantic's "N validation errors: {'type': ..., 'loc': (...), 'msg': '...'}" as FastAPI-based
# servers (llama-cpp-python) put it in an error message.
_PYDANTIC_ERROR = re.compile(r"'loc': \(([^)]*)\), 'msg': (['\"])(.*?)\2")
_BROKEN_STREAM_ERRORS = frozenset({"ReadError", "RemoteProtocolError", "WriteError", "EndOfStream"})
_RETRYABLE_STATUS = frozenset({408, 429, 502, 503, 504, 529})
# Words with which servers say "not now" rather than "not this": such a 5xx is worth retrying.
_TRANSIENT_HINTS = ("overload", "capacity", "too many", "rate limit", "busy", "unavailable", "retry",
                    "try again", "temporar")  # fmt: skip
# Words with which servers say "not this request": such a 5xx fails the same way every time.
_REFUSAL_HINTS = ("validation", "invalid", "not supported", "unsupported", "must be", "should be",
                  "expected", "required", "not a valid", "not allowed", "malformed",
                  "parse", "typeerror", "valueerror", "keyerror")  # fmt: skip


def provider_reason(exc: BaseException) -> str:
    """A short, safe sentence from a provider error's body, or ``""`` if it says nothing.

    Reads OpenAI-style ``{"error": {"message": ...}}`` (the client unwraps ``error``),
    FastAPI-style ``{"detail": "..." | [{"loc": [...], "msg": ...}]}`` and plain-text bodies;
    a pydantic validation dump is shortened to its first error (``messages[0].content: Input
    should be a valid string``). Control characters are removed, anything shaped like an API
    key or bearer token is cut to its first characters, and the text is cut to ~200 characters.

    Args:
        exc: An ``openai.APIError`` (others give ``""``).

    Returns:
        The reason without a trailing full stop.
    """
    body = getattr(exc, "body", None)
    text = ""
    if isinstance(body, dict):
        for key in ("message", "detail", "error", "msg"):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get("message") or value.get("msg")
            if isinstance(value, list):
                value = "; ".join(_validation_item(item) for item in value[:3])
            if isinstance(value, str) and value.strip():
                text = value
                break
    elif isinstance(body, str):
        text = body
    return _clean(_first_validation_error(text))


def _validation_item(item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    where = _location(item.get("loc") or [])
    return f"{where}: {item.get('msg')}" if where else str(item.get("msg"))


def _location(parts: Any) -> str:
    """``('body', 'messages', 0, 'ChatCompletionRequestUserMessage', 'content')`` → ``messages[0].content``."""
    out = ""
    for part in parts:
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
            out += f"[{part}]"
        elif isinstance(part, str) and part != "body" and not part[:1].isupper():
            out += f".{part}" if out else part
    return out


def _first_validation_error(text: str) -> str:
    match = _PYDANTIC_ERROR.search(text)
    if match is None:
        return text
    parts = [p.strip().strip("'\"") for p in match.group(1).split(",") if p.strip()]
    count = text.split(":", 1)[0] if "validation error" in text.split(":", 1)[0] else "validation error"
    where = _location(parts)
    return f"{count}, the first: {where + ': ' if where else ''}{match.group(3)}"


def _clean(text: str) -> str:
    text = _SECRET.sub(lambda m: (m.group(1) or m.group(2) or "") + "…", text)
    text = " ".join(_CONTROL.sub(" ", text).split()).rstrip(". ")
    if len(text) > _REASON_MAX_CHARS:
        text = text[: _REASON_MAX_CHARS - 1].rstrip() + "…"
    return text


def _broke_off(exc: BaseException) -> bool:
    """True when a connection that was up failed mid-body: read errors, a peer that hung up.

    The openai client wraps such errors of a stream in ``APIConnectionError`` (the transport's
    error is its cause), the same class as "connection refused"; the cause tells the two apart.
    Matched by class name because openai 3.x speaks through ``httpx2`` (and ``httpcore2``,
    ``h11``), whose classes are not httpx's.
    """
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ConnectionResetError | BrokenPipeError) or any(
            cls.__name__ in _BROKEN_STREAM_ERRORS for cls in type(seen).__mro__
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


_VERSIONED_PATH = re.compile(r"/v\d+[a-z0-9]*/")
"""An API version segment in a request path (``/v1/``, ``/api/v3/``, ``/v1beta/``)."""


def _request_path(exc: openai.APIStatusError) -> str:
    """The path the failed request went to (``/chat/completions``), or ``""`` when unknown."""
    request = getattr(getattr(exc, "response", None), "request", None)
    return str(getattr(getattr(request, "url", None), "path", "") or "")


def _status_failure(exc: openai.APIStatusError) -> RunFailure:
    status = exc.status_code
    reason = provider_reason(exc)
    lowered = reason.lower()
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return KEY_REJECTED  # without the reason: providers echo parts of the key they refused
    if isinstance(exc, openai.NotFoundError):
        path = _request_path(exc)
        if path and not _VERSIONED_PATH.search(path):  # the base URL lacks its /v1 (try13)
            return _quoting("run_error.model_path_not_found", reason, path=path)
        return _quoting("run_error.model_not_found", reason)
    if status in _RETRYABLE_STATUS or (status >= 500 and any(h in lowered for h in _TRANSIENT_HINTS)):
        return _quoting("run_error.model_busy", reason, status=status)
    if status < 500 or any(hint in lowered for hint in _REFUSAL_HINTS):
        # The same request fails the same way (FastAPI-based servers report validation as 500).
        return _quoting("run_error.model_rejected", reason, status=status)
    # A 5xx that names neither a busy server nor a fault of the request: the server failed on its
    # side (a crash, an out-of-memory), which often passes, so clients offer Retry.
    return _quoting("run_error.model_failed", reason, status=status)


def classify(exc: BaseException) -> RunFailure:
    """Map an exception raised while streaming the agent to a :class:`RunFailure`.

    Model failures get a code that tells whether sending the message again can help
    (``model_unreachable``, ``model_busy``, ``model_failed``) or not (``model_rejected``,
    ``model_error``), and
    the provider's own reason, sanitised (:func:`provider_reason`), when its body gives one.
    """
    if isinstance(exc, ContextOverflowError):
        return CONTEXT_OVERFLOW
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException | TimeoutError):
        return MODEL_TIMED_OUT
    if _broke_off(exc):
        return MODEL_BROKE_OFF
    if isinstance(exc, openai.APIConnectionError | httpx.TransportError):
        return MODEL_UNREACHABLE
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc)
    if isinstance(exc, openai.APIError):
        # An error event inside an otherwise successful stream.
        return _quoting("run_error.model_stream_error", provider_reason(exc) or _clean(exc.message))
    return INTERNAL
