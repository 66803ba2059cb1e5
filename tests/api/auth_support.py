"""Helpers for the identity tests: an API server in a given AUTH_MODE, accounts, logins."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support import ApiServer, app_env, patched_env
from ventapp.auth.service import create_account
from ventapp.config import get_settings
from ventapp.db.engine import make_engine

PASSWORD = "correct horse battery"


@contextmanager
def auth_server(data_dir: Path, llm_url: str, **auth: str) -> Iterator[ApiServer]:
    """The API with the scripted model and the given ``AUTH_*`` keys, e.g. ``AUTH_MODE="local"``."""
    defaults = {
        "AUTH_MODE": "none",
        "AUTH_TRUSTED_PROXIES": "",
        "AUTH_NONE_OPERATORS": "",
        "AUTH_LOGIN_MAX_FAILURES": "5",
        "AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS": "20",
        "AUTH_COOKIE_SECURE": "auto",
    }
    with patched_env({**app_env(data_dir, llm_url), **defaults, **auth}), ApiServer() as server:
        yield server


def add_account(name: str, password: str | None = PASSWORD, role: str = "user") -> str:
    """Create an account in the running server's database (settings of the enclosing server)."""
    engine = make_engine(get_settings().database_url)
    try:
        return create_account(engine, name, password, role).user_name
    finally:
        engine.dispose()


@contextmanager
def logged_in(url: str, name: str, password: str = PASSWORD) -> Iterator[httpx.Client]:
    """A client holding a login session cookie of ``name``."""
    with httpx.Client(base_url=url, timeout=30) as client:
        response = client.post("/api/auth/login", json={"user_name": name, "password": password})
        assert response.status_code == 200, response.text
        yield client


def with_key(url: str, key: str) -> httpx.Client:
    """A client that sends ``Authorization: Bearer <key>`` (use it in a ``with`` block)."""
    return httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {key}"})
