"""rxconfig.py: settings Reflex must see come from ventapp.config (REDIS_URL → Reflex's redis_url)."""

from __future__ import annotations

import os
import subprocess
import sys

from ventapp.config import PROJECT_ROOT


def _reflex_redis_url(**env: str) -> str:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_URL", "REFLEX_REDIS_URL"))}
    code = "import rxconfig; print(rxconfig.config.redis_url)"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, env={**base, "DEEP_AGENT_ENV_PRIORITY": "none", **env},
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def test_redis_url_reaches_reflex_and_none_means_its_default_state_manager() -> None:
    assert _reflex_redis_url(REDIS_URL="redis://cache.internal:6379/2") == "redis://cache.internal:6379/2"
    assert _reflex_redis_url() == "None"
