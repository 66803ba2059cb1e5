"""App assembly: importing the app has no side effects (pitfall 11), and it mounts our API first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ventapp.config import PROJECT_ROOT


def test_importing_the_app_opens_nothing(tmp_path: Path) -> None:
    """Pitfall 11: a module imported twice runs its body twice; resources belong in the lifespan."""
    data_dir = tmp_path / "data"
    code = (
        "import ventapp.ventapp as m, ventapp.agent.runtime as r;"
        "assert r._current is None;"
        "routes = m.api.openapi()['paths'];"
        "assert '/api/chat' in routes and '/health' in routes, routes;"
        "print('ok')"
    )
    env = {
        **os.environ,
        "DEEP_AGENT_ENV_PRIORITY": "none",
        "DATA_DIR": str(data_dir),
        "REFLEX_TELEMETRY_ENABLED": "false",
    }
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")
    assert not data_dir.exists() or not any(data_dir.iterdir()), (
        "import created files: side effects at import time"
    )
