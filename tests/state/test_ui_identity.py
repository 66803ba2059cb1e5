"""The UI's identity check (issue 15): the socket's handshake headers, verified like the API's."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from tests.support import patched_env
from ventapp.auth import service
from ventapp.config_auth import AuthSettings
from ventapp.db.engine import make_engine
from ventapp.state import ui_identity

PASSWORD = "correct horse battery"


@pytest.fixture
def engine(migrated_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sa.Engine]:
    shutil.copyfile(migrated_template, tmp_path / "db.sqlite")
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    monkeypatch.setattr(ui_identity, "get_runtime", lambda: SimpleNamespace(engine=engine))
    yield engine
    engine.dispose()


def test_local_mode_takes_the_session_cookie_and_nothing_else(engine: sa.Engine) -> None:
    service.create_account(engine, "alice", PASSWORD, "operator")
    _, token = service.login(engine, AuthSettings(mode="local"), "alice", PASSWORD, "127.0.0.1")
    with patched_env({"AUTH_MODE": "local"}):
        caller = ui_identity._verify({"cookie": f"lang=en; ventagent_session={token}"}, "127.0.0.1")
        assert caller is not None and (caller.name, caller.role) == ("alice", "operator")
        assert ui_identity._verify({"cookie": "ventagent_session=forged"}, "127.0.0.1") is None
        assert ui_identity._verify({"x-forwarded-user": "alice"}, "127.0.0.1") is None, (
            "no header in local mode"
        )
        assert ui_identity._verify({"cookie": 'broken="'}, "127.0.0.1") is None


def test_header_mode_trusts_the_header_only_from_the_proxy(engine: sa.Engine) -> None:
    with patched_env({"AUTH_MODE": "header", "AUTH_TRUSTED_PROXIES": "10.0.0.0/8"}):
        caller = ui_identity._verify({"x-forwarded-user": " Bob "}, "10.1.2.3")
        assert caller is not None and caller.name == "Bob" and caller.method == "header"
        assert ui_identity._verify({"x-forwarded-user": "Bob"}, "127.0.0.1") is None, "around the proxy"
        assert ui_identity._verify({}, "10.1.2.3") is None
