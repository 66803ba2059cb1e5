"""Is a model endpoint reachable? A short, cached probe for ``/health`` (issue 10).

Also home of :class:`Check`, the shape every subsystem check of :mod:`ventapp.agent.health` returns.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx

from ventapp.model_config import ModelRoute

Status = Literal["ok", "degraded", "down"]

PROBE_TIMEOUT_S = 2.0
"""How long the model endpoint has to answer before it reads as unreachable."""
PROBE_TTL_S = 5.0
"""How long a probe's answer is reused."""
OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Check:
    """One subsystem's state: ``status`` and a sentence saying why; ``detail`` adds figures."""

    status: Status
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        """``{status, reason, **detail}`` as ``/health`` shows it."""
        return {"status": self.status, "reason": self.reason, **self.detail}


def public_url(base_url: str) -> str:
    """An endpoint as it may be shown: no user, password, query or fragment (keys never leak)."""
    if not base_url:
        return OPENAI_BASE_URL
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class EndpointProbe:
    """Is a model endpoint reachable? ``GET {base_url}/models`` with a short timeout, cached.

    Any HTTP answer means reachable: 2xx–4xx is ``ok``, except 401/403 (the key is refused),
    404 (the base URL lacks the API's path, e.g. ``/v1``: chats to it answer 404 too) and 5xx,
    which are ``degraded``. No answer within :data:`PROBE_TIMEOUT_S` is ``down``. Concurrent checks of one endpoint share a probe.
    """

    def __init__(self, ttl_s: float = PROBE_TTL_S, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self._cache: dict[str, tuple[float, Check]] = {}
        self._inflight: dict[str, asyncio.Task[Check]] = {}

    async def check(self, route: ModelRoute) -> Check:
        """The route's endpoint state (from the cache when fresh)."""
        if not route.configured:
            return Check(
                "degraded",
                "No model is configured: set OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL (and its key) for another OpenAI-compatible server (see .env.example).",
                {"configured": False},
            )
        key = route.base_url or OPENAI_BASE_URL
        cached = self._cache.get(key)
        if cached is not None and time.monotonic() - cached[0] < self.ttl_s:
            return cached[1]
        task = self._inflight.get(key)
        if task is None:
            task = self._inflight[key] = asyncio.ensure_future(self._probe(route))
            task.add_done_callback(lambda _: self._inflight.pop(key, None))
        return await asyncio.shield(task)

    async def _probe(self, route: ModelRoute) -> Check:
        url = (route.base_url or OPENAI_BASE_URL).rstrip("/") + "/models"
        shown = public_url(route.base_url)
        started = time.monotonic()
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                response = await client.get(url, headers={"Authorization": f"Bearer {route.api_key}"})
        except httpx.TimeoutException:
            check = Check("down", f"{shown} did not answer within {self.timeout_s:g} s.", {"endpoint": shown})
        except httpx.HTTPError as exc:
            check = Check("down", f"{shown} is not reachable ({type(exc).__name__}).", {"endpoint": shown})
        else:
            elapsed_ms = int((time.monotonic() - started) * 1000)
            detail = {"endpoint": shown, "http_status": response.status_code, "latency_ms": elapsed_ms}
            if response.status_code in (401, 403):
                check = Check(
                    "degraded", f"{shown} refused the API key (HTTP {response.status_code}).", detail
                )
            elif response.status_code == 404:
                # OpenAI-compatible servers (vLLM, llama.cpp, Ollama …) all serve {base}/models.
                check = Check(
                    "degraded",
                    f"{shown} has no /models (HTTP 404), so chats to it fail with HTTP 404 too. Check the "
                    "route's base URL (OPENAI_BASE_URL, or its base_url in MODELS): it usually ends in /v1.",
                    detail,
                )
            elif response.status_code >= 500:
                check = Check("degraded", f"{shown} answered HTTP {response.status_code}.", detail)
            else:
                check = Check("ok", f"{shown} answered in {elapsed_ms} ms.", detail)
        self._cache[route.base_url or OPENAI_BASE_URL] = (time.monotonic(), check)
        return check
