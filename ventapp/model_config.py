"""Named model routes (``MODELS``): the :class:`ModelRoute` type and the parsing of the setting.

Only :mod:`ventapp.config` reads the environment; it hands the raw text of ``MODELS`` here.
A route is one OpenAI-compatible endpoint and model the agent can run on; the main route
(``default``) comes from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``MODEL_NAME`` /
``CONTEXT_LIMIT``, the others from ``MODELS``, e.g.::

    MODELS='[{"name": "local", "model": "qwen3-8b", "base_url": "http://localhost:8000/v1",
              "api_key": "x", "context_limit": 32768, "thinking": "qwen"}]'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ventapp.config_text import load_document
from ventapp.config_urls import check_server_url

THINKING_CONTROLS = ("auto", "none", "effort", "qwen", "deepseek")
DEFAULT_ROUTE = "default"
"""Name of the model route built from OPENAI_BASE_URL / OPENAI_API_KEY / MODEL_NAME / CONTEXT_LIMIT."""


@dataclass(frozen=True)
class ModelRoute:
    """One OpenAI-compatible model the agent can run on (the main one, or an entry of ``MODELS``).

    Attributes:
        name: The route's name as clients choose it (``/api/chat``'s ``model`` field, the picker).
        model: Model name sent to the endpoint (and priced under, fail-closed).
        base_url: The endpoint; empty means OpenAI's own.
        api_key: The endpoint's key (a secret: never shown).
        context_limit: Declared window in tokens.
        thinking_control: ``auto`` | ``none`` | ``effort`` | ``qwen`` | ``deepseek``.
        thinking_level: The level at start (``default``: nothing is sent).
        thinking_levels: Levels offered on this route; empty means every level of its control.
    """

    name: str
    model: str
    base_url: str = ""
    api_key: str = ""
    context_limit: int = 128000
    thinking_control: str = "auto"
    thinking_level: str = "default"
    thinking_levels: tuple[str, ...] = ()

    @property
    def configured(self) -> bool:
        """True when an endpoint or a key is set; without either no model call can succeed."""
        return bool(self.api_key or self.base_url)


_ROUTE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ROUTE_FIELDS = frozenset(
    {
        "name",
        "model",
        "base_url",
        "api_key",
        "context_limit",
        "window",
        "thinking",
        "thinking_level",
        "thinking_levels",
    }
)


def _route_from(entry: object, position: int, default_window: int) -> ModelRoute:
    where = f"MODELS entry {position + 1}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be a mapping with at least name and model")
    unknown = sorted(set(entry) - _ROUTE_FIELDS)
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown}; known: {', '.join(sorted(_ROUTE_FIELDS))}")
    name, model = str(entry.get("name") or "").strip(), str(entry.get("model") or "").strip()
    if not _ROUTE_NAME.match(name) or name == DEFAULT_ROUTE:
        raise ValueError(
            f"{where}: name must be 1-64 letters, digits, '.', '_' or '-' and not {DEFAULT_ROUTE!r}, got {name!r}"
        )
    if not model:
        raise ValueError(f"{where} ({name}) needs a model (the name the endpoint knows it by)")
    window = entry.get("context_limit", entry.get("window", default_window))
    if isinstance(window, bool) or not str(window).isdigit() or int(window) < 1024:
        raise ValueError(
            f"{where} ({name}): context_limit must be a whole number of tokens >= 1024, got {window!r}"
        )
    control = str(entry.get("thinking") or "auto").lower()
    if control not in THINKING_CONTROLS:
        raise ValueError(
            f"{where} ({name}): thinking must be one of {', '.join(THINKING_CONTROLS)}, got {control!r}"
        )
    levels = entry.get("thinking_levels") or []
    if not isinstance(levels, list) or not all(isinstance(level, str) for level in levels):
        raise ValueError(f"{where} ({name}): thinking_levels must be a list of level names")
    base_url = str(entry.get("base_url") or "").strip()
    check_endpoint(f"{where} ({name}): base_url", base_url)
    return ModelRoute(
        name=name,
        model=model,
        base_url=base_url,
        api_key=str(entry.get("api_key") or "").strip(),
        context_limit=int(window),
        thinking_control=control,
        thinking_level=str(entry.get("thinking_level") or "default").strip().lower(),
        thinking_levels=tuple(level.strip().lower() for level in levels),
    )


def check_endpoint(where: str, url: str) -> None:
    """Refuse a ``url`` that cannot be an OpenAI-compatible endpoint (empty is fine: OpenAI's own).

    Without a scheme (``localhost:8000/v1``) the HTTP client refuses every request with an
    ``UnsupportedProtocol`` that reads like a server that is down; say it at start instead.

    Args:
        where: The setting that holds it (``OPENAI_BASE_URL``, ``MODELS (name)``).
        url: Its value.

    Raises:
        ValueError: ``url`` is not an http:// or https:// URL with a host, or its port is not
            1–65535, or its user or password holds a raw ``@`` (the message names ``where``).
    """
    if not url:
        return
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest.split("/", 1)[0]:
        raise ValueError(
            f"{where} must be an http:// or https:// URL such as http://localhost:8000/v1, got {url!r}"
        )
    check_server_url(where, url)


def parse_routes(raw: str, root: Path, default_window: int = 128000) -> tuple[ModelRoute, ...]:
    """The routes of ``MODELS``: inline JSON/YAML, or the path of a ``.json``/``.yaml``/``.yml`` file.

    Args:
        raw: The setting's text; empty means no extra routes.
        root: Folder a relative file path is read from (the project root).
        default_window: ``context_limit`` of an entry that gives none (tokens).

    Returns:
        The routes in the order given.

    Raises:
        ValueError: Unreadable file, invalid JSON/YAML, not a list, a bad or repeated entry;
            the message names ``MODELS`` and the entry.
    """
    data = load_document(raw, "MODELS", root)
    if data is None:
        return ()
    if isinstance(data, dict) and "models" in data:
        data = data["models"]
    if not isinstance(data, list):
        raise ValueError('MODELS must be a list of routes, e.g. [{"name": "local", "model": "qwen3", ...}]')
    routes = tuple(_route_from(entry, position, default_window) for position, entry in enumerate(data))
    names = [route.name for route in routes]
    if len(set(names)) != len(names):
        raise ValueError(
            f"MODELS names a route twice: {', '.join(sorted(n for n in set(names) if names.count(n) > 1))}"
        )
    return routes
