"""Start N app processes on one PostgreSQL + Redis for the scale-out tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.servers import free_port
from tests.support import app_env
from ventapp.config import PROJECT_ROOT


class AppProcess:
    """``tests.scale.api_process`` in a subprocess; ``url`` once :meth:`start` returns.

    Args:
        env: Its settings (over this process's environment).
        log: Where its output goes.
        root: The checkout whose code it runs (a benchmark's baseline may be another one).
    """

    def __init__(self, env: dict[str, str], log: Path, root: Path = PROJECT_ROOT) -> None:
        self.env = env
        self.log = log
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def spawn(self) -> AppProcess:
        """Start it without waiting (start several, then :meth:`wait` for each: they import in parallel)."""
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.scale.api_process", str(self.port)],
                cwd=self.root, env={**os.environ, **self.env}, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        return self

    def start(self) -> AppProcess:
        """Start it; returns when ``/health`` answers (any status)."""
        return self.spawn().wait()

    def wait(self) -> AppProcess:
        """Return when ``/health`` answers (any status).

        Raises:
            RuntimeError: The process exited or did not answer within 180 s (its log attached).
        """
        assert self.process is not None
        deadline = time.monotonic() + 180  # imports take long on a loaded 2-core machine
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"app process exited: {self.log.read_text()[-2000:]}")
            try:
                httpx.get(f"{self.url}/health", timeout=2)
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"app process did not answer: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        """Terminate it (SIGTERM, then SIGKILL)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def scale_env(
    data_dir: Path, llm_url: str, database_url: str, redis_url: str, **extra: str
) -> dict[str, str]:
    """The settings of one process of a scale-out deployment (own DATA_DIR, shared everything else)."""
    env = app_env(data_dir, llm_url, database_url)
    return {**env, "REDIS_URL": redis_url, "CHECKPOINTER": "postgres", **extra}
