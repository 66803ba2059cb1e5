"""``/health`` reports the fixed prompt against CONTEXT_LIMIT and degrades when it does not fit (issue 19)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env


def _measured(url: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        body = httpx.get(f"{url}/health").json()
        if body["model"].get("prompt") is not None or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


@pytest.mark.parametrize(
    ("profile", "tool_count", "fits", "status"), [("full", 13, False, "degraded"), ("lean", 8, True, "ok")]
)
def test_fixed_prompt_in_a_4k_window(
    llm: ScriptedServer, tmp_path: Any, profile: str, tool_count: int, fits: bool, status: str
) -> None:
    env = {**app_env(tmp_path, llm.base_url), "CONTEXT_LIMIT": "4096", "TOOLS_PROFILE": profile}
    with patched_env(env), ApiServer() as server:
        body = _measured(server.url)
    prompt = body["model"]["prompt"]
    assert prompt["fits"] is fits and (prompt["fixed_tokens"] > 0.6 * 4096) is not fits
    assert prompt["tool_count"] == tool_count and prompt["tools_profile"] == profile
    assert body["status"] == status and body["database"] == "ok"
