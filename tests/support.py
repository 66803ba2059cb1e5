"""Test support: run our API app over real HTTP in a background thread, with isolated settings."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import uvicorn

from ventapp.agent.runtime import AgentRuntime
from ventapp.api.app import create_api
from ventapp.config import get_settings, load_settings
from ventapp.scheduler.lifespan import app_lifespan


@contextmanager
def patched_env(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables (and reload settings) for the duration of the block."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    get_settings.cache_clear()
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
        get_settings.cache_clear()


def app_env(data_dir: Path, base_url: str | None, database_url: str = "") -> dict[str, str]:
    """Settings for a test instance: its own data folder, the scripted model (or none), and
    ``database_url`` ("" = SQLite in the data folder; see the ``database_url`` fixture; a PostgreSQL
    one holds the graph state too)."""
    return {
        "DEEP_AGENT_ENV_PRIORITY": "none",
        "DATA_DIR": str(data_dir),
        "DATABASE_URL": database_url,
        "OPENAI_BASE_URL": base_url or "",
        "OPENAI_API_KEY": "scripted" if base_url else "",
        "MODEL_NAME": "scripted-demo",
        "MODEL_MAX_RETRIES": "0",
        "MODEL_TIMEOUT_S": "20",
        # On PostgreSQL the graph state goes there too, as in a scale-out deployment.
        "CHECKPOINTER": "postgres" if database_url.startswith("postgresql") else "sqlite",
    }


class ApiServer:
    """``create_api()`` with the app's lifespan (runtime + schedules) under uvicorn on a free loopback port."""

    def __init__(self) -> None:
        settings = get_settings()

        @asynccontextmanager
        async def lifespan(_app: object) -> AsyncIterator[None]:
            async with app_lifespan(settings):
                yield

        app = create_api(lifespan=lifespan)
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="api-under-test", daemon=True)
        self.url = ""

    def __enter__(self) -> ApiServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("API server under test did not start")
            time.sleep(0.02)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(15)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(5)


async def open_runtime(data_dir: Path, base_url: str, **extra: str) -> AgentRuntime:
    """An in-process runtime on ``data_dir`` against the scripted model at ``base_url`` (no retries);
    ``extra``: more settings. The caller closes it (``await runtime.close()``)."""
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "DATA_DIR": str(data_dir),
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "x",
            "MODEL_NAME": "scripted-demo",
            "MODEL_MAX_RETRIES": "0",
            **extra,
        }
    )
    return await AgentRuntime.open(settings)
