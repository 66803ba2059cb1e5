"""The chat model: ``ChatOpenAI`` against any OpenAI-compatible endpoint.

It is a :class:`~ventapp.agent.openai_compat.CompatChatOpenAI`, so servers stricter
than OpenAI (llama.cpp, llama-cpp-python, Ollama, vLLM) get requests they accept
(``OPENAI_COMPAT``; ``auto`` is lenient for any endpoint but OpenAI's).

Three settings are not optional (DESIGN.md, verified facts):

* ``stream_usage=True`` — with a ``base_url`` langchain-openai leaves it off, and
  then no streamed call reports usage and billing silently falls back to estimates;
* ``use_responses_api=False`` — third-party endpoints speak Chat Completions only;
* ``profile["max_input_tokens"]`` — always set (pitfall 2): summarisation triggers
  at a fraction of it, and without it the framework assumes 170,000 tokens or
  fails on first compaction. ``profile=`` replaces the known profile, so it is merged.
"""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from ventapp.agent.openai_compat import CompatChatOpenAI, resolve_compat
from ventapp.config import Settings

UNCONFIGURED_KEY = "not-configured"
"""Placeholder key so the client can be built; a run refuses to start without a real one."""


def build_model(settings: Settings) -> CompatChatOpenAI:
    """Build the chat model from settings.

    Args:
        settings: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``MODEL_NAME``, ``CONTEXT_LIMIT``
            (tokens), ``MODEL_TEMPERATURE``, ``MODEL_TIMEOUT_S`` (s), ``MODEL_MAX_RETRIES``,
            ``OPENAI_COMPAT``.

    Returns:
        A ``ChatOpenAI`` subclass whose ``profile["max_input_tokens"] == settings.context_limit``
        and whose ``compat`` is ``strict`` or ``lenient``.
    """
    known = ChatOpenAI(model=settings.model_name, api_key=UNCONFIGURED_KEY).profile
    return CompatChatOpenAI(
        model=settings.model_name,
        base_url=settings.openai_base_url or None,
        api_key=settings.openai_api_key or UNCONFIGURED_KEY,
        temperature=settings.model_temperature,
        timeout=settings.model_timeout_s,
        max_retries=settings.model_max_retries,
        stream_usage=True,
        use_responses_api=False,
        profile={**(known or {}), "max_input_tokens": settings.context_limit},
        compat=resolve_compat(settings.openai_compat, settings.openai_base_url),
    )
