"""``/health`` reports the fixed prompt against CONTEXT_LIMIT and degrades when it does not fit (issue 19)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.agent.tool_profiles import LEAN_TOOLS


def _measured(url: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        body = httpx.get(f"{url}/health").json()
        if body["model"].get("prompt") is not None or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


@pytest.mark.parametrize(("profile", "fits", "status"), [("full", False, "degraded"), ("lean", True, "ok")])
def test_fixed_prompt_in_a_4k_window(
    llm: ScriptedServer, tmp_path: Any, profile: str, fits: bool, status: str
) -> None:
    env = {**app_env(tmp_path, llm.base_url), "CONTEXT_LIMIT": "4096", "TOOLS_PROFILE": profile}
    with patched_env(env), ApiServer() as server:
        body = _measured(server.url)
    prompt = body["model"]["prompt"]
    assert prompt["fits"] is fits and (prompt["fixed_tokens"] > 0.6 * 4096) is not fits
    if profile == "lean":
        assert prompt["tool_count"] == len(LEAN_TOOLS)
    else:  # every registered tool and the framework's own: more than lean, whatever is registered
        assert prompt["tool_count"] > len(LEAN_TOOLS) + 5
    assert prompt["tools_profile"] == profile
    assert body["status"] == status and body["database"] == "ok"
