"""Shared fixtures. Tests never read the developer's .env: priority ``none`` from the start."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

os.environ["DEEP_AGENT_ENV_PRIORITY"] = "none"

from tests import servers
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.db.engine import make_engine, upgrade_to_head

ENGINES = tuple(filter(None, os.environ.get("VENT_TEST_ENGINES", "sqlite,postgres,mariadb").split(",")))
"""Relational engines an ``engines``-marked module runs on (``VENT_TEST_ENGINES`` narrows it)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "engines: run the module's app on every engine in ENGINES (SQLite, and PostgreSQL and MariaDB "
        "from tests/servers.py)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "db_engine" in metafunc.fixturenames and metafunc.definition.get_closest_marker("engines"):
        metafunc.parametrize("db_engine", ENGINES, indirect=True, scope="module")


def _server(kind: str, factory: type) -> Iterator[object]:
    if not servers.available(kind):
        pytest.fail(f"{kind} is not installed: run `make servers` (Debian packages, see the Makefile)")
    server = factory().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[servers.PostgresServer]:
    """A throwaway PostgreSQL for the whole run (started on first use)."""
    yield from _server("postgres", servers.PostgresServer)  # type: ignore[misc]


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[servers.MariaDBServer]:
    """A throwaway MariaDB for the whole run (started on first use)."""
    yield from _server("mariadb", servers.MariaDBServer)  # type: ignore[misc]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[servers.RedisServer]:
    """A throwaway Redis for the whole run (started on first use)."""
    yield from _server("redis", servers.RedisServer)  # type: ignore[misc]


@pytest.fixture(scope="module")
def db_engine(request: pytest.FixtureRequest) -> str:
    """The relational engine of this module's app: ``sqlite`` unless the module is marked ``engines``."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="module")
def database_url(db_engine: str, request: pytest.FixtureRequest) -> str:
    """``DATABASE_URL`` for this module's app: "" (SQLite in DATA_DIR) or a fresh database on a test server."""
    if db_engine == "sqlite":
        return ""
    return request.getfixturevalue(f"{db_engine}_server").create_database()


@pytest.fixture(scope="module")
def llm(db_engine: str) -> Iterator[ScriptedServer]:
    """A scripted OpenAI-compatible server over real HTTP (one per test module and engine).

    One per engine because langchain-openai caches its HTTP client per base URL, bound to the
    event loop of the app that made it: the next app (a new loop) must see a new URL.
    """
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def api(
    llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory, database_url: str
) -> Iterator[ApiServer]:
    """Our API app on a loopback port, talking to ``llm``, with its own data folder (and database)."""
    env = app_env(tmp_path_factory.mktemp("data"), llm.base_url, database_url)
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def client(api: ApiServer, llm: ScriptedServer) -> Iterator[httpx.Client]:
    """An HTTP client for ``api``; the scripted server's queue and log start empty."""
    llm.reset()
    with httpx.Client(base_url=api.url, timeout=30) as http:
        yield http


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One SQLite database migrated to head (``alembic upgrade head``); tests get copies of it."""
    path = tmp_path_factory.mktemp("migrated-template") / "template.db"
    upgrade_to_head(f"sqlite:///{path}")
    return path


@pytest.fixture
def engine(migrated_template: Path, tmp_path: Path) -> Iterator[sa.Engine]:
    """A fresh copy of the migrated database (seed prices included); modules may define their own."""
    path = tmp_path / "migrated.db"
    shutil.copyfile(migrated_template, path)
    engine = make_engine(f"sqlite:///{path}")
    yield engine
    engine.dispose()
