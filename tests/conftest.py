"""Shared fixtures. Tests never read the developer's .env: priority ``none`` from the start."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

os.environ["DEEP_AGENT_ENV_PRIORITY"] = "none"

from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    """A scripted OpenAI-compatible server over real HTTP (one per test module)."""
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    """Our API app on a loopback port, talking to ``llm``, with its own data folder."""
    with patched_env(app_env(tmp_path_factory.mktemp("data"), llm.base_url)), ApiServer() as server:
        yield server


@pytest.fixture
def client(api: ApiServer, llm: ScriptedServer) -> Iterator[httpx.Client]:
    """An HTTP client for ``api``; the scripted server's queue and log start empty."""
    llm.reset()
    with httpx.Client(base_url=api.url, timeout=30) as http:
        yield http
