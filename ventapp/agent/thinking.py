"""Thinking levels: what a route offers and how a level is sent to its provider.

Providers switch reasoning in different ways, so a route has a *control* (``THINKING_CONTROL``
for the main route, ``thinking`` in a ``MODELS`` entry):

============  ======================================  ==========================================
control       levels                                  sent as
============  ======================================  ==========================================
``none``      ``default``                             nothing
``effort``    ``default off low medium high``         ``reasoning_effort`` (``off`` → ``"none"``)
``qwen``      ``default off on``                      ``enable_thinking`` (DashScope) or
                                                      ``chat_template_kwargs.enable_thinking``
                                                      (vLLM / llama.cpp serving Qwen3)
``deepseek``  ``default off on``                      the model: ``deepseek-chat`` /
                                                      ``deepseek-reasoner``
============  ======================================  ==========================================

``default`` always means "send nothing: the provider decides" (the model as configured).
``auto`` picks the control from the endpoint and the model name (:func:`resolve_control`).
A route's ``thinking_levels`` narrows the levels on offer; ``default`` is always kept.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ventapp.i18n import t
from ventapp.model_config import ModelRoute

DEFAULT_LEVEL = "default"
LEVELS: dict[str, tuple[str, ...]] = {
    "none": (DEFAULT_LEVEL,),
    "effort": (DEFAULT_LEVEL, "off", "low", "medium", "high"),
    "qwen": (DEFAULT_LEVEL, "off", "on"),
    "deepseek": (DEFAULT_LEVEL, "off", "on"),
}
"""Levels each control offers, in the order a picker shows them."""

DEEPSEEK_CHAT = "deepseek-chat"
DEEPSEEK_REASONER = "deepseek-reasoner"
_EFFORT_MODELS = re.compile(r"^(o\d|gpt-5|gpt-oss)", re.IGNORECASE)
_QWEN_THINKING_MODELS = re.compile(r"^(qwen3|qwq)", re.IGNORECASE)


class UnknownLevel(ValueError):
    """A level the route does not offer; ``levels`` lists the ones it does.

    Its sentence is the catalogue's :attr:`KEY` with :attr:`params`: ``str()`` is it in English (a
    start that fails, the API's ``detail``), :meth:`worded` in the language a person reads.

    Attributes:
        route: The route's name.
        level: The level asked for, as given.
        levels: The levels the route offers (``default`` first).
        params: The values the sentence names (``route``, ``levels`` joined, ``level`` quoted).
    """

    KEY = "refusal.unknown_level"

    def __init__(self, route: str, level: str, levels: tuple[str, ...]) -> None:
        self.route, self.level, self.levels = route, level, levels
        self.params: dict[str, object] = {"route": route, "levels": ", ".join(levels), "level": repr(level)}
        super().__init__(self.worded("en"))

    def worded(self, lang: str) -> str:
        """The sentence in ``lang`` (``"zh-CN"`` or ``"en"``)."""
        return t(self.KEY, lang, **self.params)


def _host(base_url: str) -> str:
    return (urlsplit(base_url).hostname or "").lower() if base_url else "api.openai.com"


def resolve_control(route: ModelRoute) -> str:
    """The route's control: its configured one, or for ``auto`` one guessed from endpoint and model.

    Returns:
        ``none`` | ``effort`` | ``qwen`` | ``deepseek``.
    """
    if route.thinking_control != "auto":
        return route.thinking_control
    host, model = _host(route.base_url), route.model
    if host.endswith("deepseek.com"):
        return "deepseek"
    if "dashscope" in host or _QWEN_THINKING_MODELS.match(model):
        return "qwen"
    if host == "api.openai.com" and _EFFORT_MODELS.match(model):
        return "effort"
    return "none"


def levels_for(route: ModelRoute) -> tuple[str, ...]:
    """The levels the route offers (``default`` first)."""
    offered = LEVELS[resolve_control(route)]
    if not route.thinking_levels:
        return offered
    return tuple(level for level in offered if level == DEFAULT_LEVEL or level in route.thinking_levels)


def check_level(route: ModelRoute, level: str) -> str:
    """``level`` normalised (trimmed, lower case) if the route offers it.

    Raises:
        UnknownLevel: The route does not offer it.
    """
    normalised = str(level or "").strip().lower()
    offered = levels_for(route)
    if normalised not in offered:
        raise UnknownLevel(route.name, str(level), offered)
    return normalised


def check_routes(routes: tuple[ModelRoute, ...]) -> None:
    """Fail the start on a route whose starting level it does not offer.

    Raises:
        ValueError: Naming the route and the key to fix (``THINKING_LEVEL`` or ``MODELS``).
    """
    for route in routes:
        for level in route.thinking_levels:
            if level not in LEVELS[resolve_control(route)]:
                raise ValueError(
                    f"MODELS route '{route.name}': thinking_levels names {level!r}, which its thinking control "
                    f"'{resolve_control(route)}' does not offer ({', '.join(LEVELS[resolve_control(route)])})"
                )
        try:
            check_level(route, route.thinking_level)
        except UnknownLevel as exc:
            key = (
                "THINKING_LEVEL" if route.name == "default" else f"MODELS route '{route.name}' thinking_level"
            )
            raise ValueError(f"{key}: {exc}") from None


def model_kwargs(route: ModelRoute, level: str) -> dict[str, Any]:
    """What ``ChatOpenAI`` needs for ``level`` on ``route``: ``model`` plus the provider's switch.

    Args:
        route: The route (its control decides the mapping).
        level: A level :func:`check_level` accepted.

    Returns:
        ``{"model": ...}`` and, when the level sends something, ``reasoning_effort`` or
        ``extra_body`` (merged into the request body by the OpenAI client).
    """
    control = resolve_control(route)
    kwargs: dict[str, Any] = {"model": route.model}
    if level == DEFAULT_LEVEL or control == "none":
        return kwargs
    if control == "effort":
        kwargs["reasoning_effort"] = "none" if level == "off" else level
    elif control == "qwen":
        enabled = level == "on"
        if "dashscope" in _host(route.base_url):
            kwargs["extra_body"] = {"enable_thinking": enabled}
        else:  # vLLM, SGLang and llama.cpp pass it to Qwen3's chat template
            kwargs["extra_body"] = {"chat_template_kwargs": {"enable_thinking": enabled}}
    elif control == "deepseek":
        kwargs["model"] = DEEPSEEK_REASONER if level == "on" else DEEPSEEK_CHAT
    return kwargs


def billed_model(route: ModelRoute, level: str) -> str:
    """The model name a call on ``route`` at ``level`` is sent (and priced) under."""
    return str(model_kwargs(route, level)["model"])
