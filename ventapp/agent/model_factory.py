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

from ventapp.agent.openai_compat import CompatChatOpenAI, resolve_compat
from ventapp.agent.thinking import DEFAULT_LEVEL, model_kwargs, resolve_control
from ventapp.config import Settings
from ventapp.model_config import ModelRoute

UNCONFIGURED_KEY = "not-configured"
"""Placeholder key so the client can be built; a run refuses to start without a real one."""


def build_model(
    settings: Settings, route: ModelRoute | None = None, thinking: str | None = None
) -> CompatChatOpenAI:
    """Build the chat model of a route.

    Args:
        settings: ``MODEL_TEMPERATURE``, ``MODEL_TIMEOUT_S`` (s), ``MODEL_MAX_RETRIES``,
            ``OPENAI_COMPAT``, and the main route (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
            ``MODEL_NAME``, ``CONTEXT_LIMIT``).
        route: The route to build (default: the main one).
        thinking: A level the route offers (:mod:`ventapp.agent.thinking`); default: the
            route's starting level.

    Returns:
        A ``ChatOpenAI`` subclass whose ``profile["max_input_tokens"] == route.context_limit``,
        whose ``compat`` is ``strict`` or ``lenient``, with the thinking level's parameters.
    """
    route = route or settings.main_route
    kwargs = model_kwargs(route, thinking or route.thinking_level or DEFAULT_LEVEL)
    model = CompatChatOpenAI(
        **kwargs,
        base_url=route.base_url or None,
        api_key=route.api_key or UNCONFIGURED_KEY,
        temperature=settings.model_temperature,
        timeout=settings.model_timeout_s,
        max_retries=settings.model_max_retries,
        stream_usage=True,
        use_responses_api=False,
        compat=resolve_compat(settings.openai_compat, route.base_url),
        echo_reasoning=resolve_control(route) == "deepseek",
    )
    # The profile langchain-openai knows for the model name, with the route's context window. Set
    # after construction: a second ChatOpenAI just to read it built clients for nothing (~0.1 s).
    model.profile = {**(model.profile or {}), "max_input_tokens": route.context_limit}
    return model
