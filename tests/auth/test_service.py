"""Login, sessions, keys and throttling against a real (SQLite) database (issue 15)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from ventapp.auth import service
from ventapp.auth.service import AuthRejected, Caller
from ventapp.config_auth import AuthSettings
from ventapp.db import auth_store
from ventapp.db.auth_models import Account, LoginSession
from ventapp.i18n import formats

PASSWORD = "correct horse battery"
AUTH = AuthSettings(mode="local", max_failures_per_account=3, max_failures_per_address=4, login_window_s=60)


def test_the_password_is_stored_as_an_argon2id_hash_only(engine: sa.Engine) -> None:
    service.create_account(engine, "alice", PASSWORD, "user")
    with Session(engine) as db:
        stored = db.get(Account, "alice")
    assert stored is not None and stored.password_hash is not None
    assert stored.password_hash.startswith("$argon2id$") and PASSWORD not in stored.password_hash


def test_a_weak_password_and_a_bad_role_are_refused(engine: sa.Engine) -> None:
    with pytest.raises(AuthRejected) as weak:
        service.create_account(engine, "alice", "short", "user")
    assert weak.value.code == "weak_password" and "short" not in weak.value.message
    assert weak.value.worded("zh-CN") == "密码至少要有 10 个字符。", "the API words it per language"
    with pytest.raises(AuthRejected) as role:
        service.create_account(engine, "alice", PASSWORD, "root")
    assert role.value.message == "The role must be one of user, operator."
    assert role.value.worded("zh-CN") == "角色只能是 user, operator 之一。"
    assert auth_store.get_account(engine, "alice") is None


def test_login_opens_a_session_whose_token_is_stored_hashed(engine: sa.Engine) -> None:
    service.create_account(engine, " Alice ", PASSWORD, "operator")
    caller, token = service.login(engine, AUTH, "Alice", PASSWORD, "10.0.0.1")
    assert (caller.name, caller.role, caller.method) == ("Alice", "operator", "session")
    with Session(engine) as db:
        assert db.get(LoginSession, token) is None, "the token itself is never a key in the table"
    assert service.session_caller(engine, token) == caller
    service.logout(engine, caller.session_hash or "")
    assert service.session_caller(engine, token) is None


def test_an_expired_session_is_no_session(engine: sa.Engine) -> None:
    service.create_account(engine, "alice", PASSWORD, "user")
    caller, token = service.login(engine, AUTH, "alice", PASSWORD, "10.0.0.1")
    with Session(engine) as db:
        row = db.get(LoginSession, caller.session_hash)
        assert row is not None
        row.expires_at -= timedelta(seconds=AUTH.session_ttl_s + 1)
        db.add(row)
        db.commit()
    assert service.session_caller(engine, token) is None


def test_failures_from_one_address_throttle_every_account_from_it(engine: sa.Engine) -> None:
    for name in ("a1", "a2", "a3", "a4", "ok"):
        service.create_account(engine, name, PASSWORD, "user")
    for name in ("a1", "a2", "a3", "a4"):
        with pytest.raises(AuthRejected) as wrong:
            service.login(engine, AUTH, name, "wrong password", "192.0.2.7")
        assert wrong.value.status == 401
    with pytest.raises(AuthRejected) as throttled:
        service.login(engine, AUTH, "ok", PASSWORD, "192.0.2.7")
    assert throttled.value.status == 429 and 0 < (throttled.value.retry_after or 0) <= AUTH.login_window_s
    caller, _ = service.login(engine, AUTH, "ok", PASSWORD, "192.0.2.8")
    assert caller.name == "ok", "another address is not throttled"


def test_failures_of_one_account_throttle_it_from_every_address(engine: sa.Engine) -> None:
    service.create_account(engine, "alice", PASSWORD, "user")
    for address in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
        with pytest.raises(AuthRejected):
            service.login(engine, AUTH, "alice", "wrong password", address)
    with pytest.raises(AuthRejected) as throttled:
        service.login(engine, AUTH, "alice", PASSWORD, "192.0.2.99")
    assert throttled.value.code == "throttled"
    # Tester: retry_after must be present and whole seconds (the sentences name it as a duration).
    wait = throttled.value.retry_after
    assert type(wait) is int and 0 < wait <= AUTH.login_window_s
    assert throttled.value.params == {"wait": wait}
    assert (
        throttled.value.worded("en")
        == throttled.value.message
        == (f"Too many failed logins. Try again in {formats.wait(wait, 'en')}.")
    )
    assert throttled.value.worded("zh-CN") == f"登录失败次数过多，请{formats.wait(wait, 'zh-CN')}后再试。"


def test_an_api_key_is_stored_hashed_and_dies_when_revoked(engine: sa.Engine) -> None:
    row, plaintext = service.create_api_key(engine, Caller("alice"), "script")
    assert plaintext.startswith(f"va_{row.id}_") and row.key_hash != plaintext
    assert plaintext not in str(service.key_public(row))
    found = service.api_key_caller(engine, AUTH, plaintext)
    assert found is not None and found.name == "alice" and found.method == "api_key"
    assert service.api_key_caller(engine, AUTH, plaintext + "x") is None
    assert auth_store.revoke_api_key(engine, "bob", row.id) is None, "only its owner revokes it"
    assert auth_store.revoke_api_key(engine, "alice", row.id) is not None
    assert service.api_key_caller(engine, AUTH, plaintext) is None


def test_roles_in_none_mode_come_from_auth_none_operators(engine: sa.Engine) -> None:
    none = AuthSettings(none_operators=frozenset({"ops"}))
    service.create_account(engine, "alice", PASSWORD, "operator")
    assert service.role_of(engine, none, "ops") == "operator"
    assert service.role_of(engine, none, "alice") == "user", "accounts do not count in none mode"
    assert service.role_of(engine, AUTH, "alice") == "operator"


def test_a_password_reset_keeps_the_role_and_ends_the_login_sessions(engine: sa.Engine) -> None:
    """Found by trying it: resetting an operator's password made them a user and left them logged in."""
    service.create_account(engine, "dave", PASSWORD, "operator")
    _, token = service.login(engine, AUTH, "dave", PASSWORD, "10.0.0.1")
    reset = service.create_account(engine, "dave", PASSWORD + "-new", None)
    assert reset.role == "operator"
    assert service.session_caller(engine, token) is None, "the old login is over"
    assert service.create_account(engine, "erin", PASSWORD, None).role == "user", "a new account is a user"


def test_safe_next_is_a_path_of_this_site_and_never_the_login_page() -> None:
    assert service.safe_next("/usage?x=1") == "/usage?x=1"
    assert service.safe_next("/login-help") == "/login-help"
    for refused in (
        "/login",
        "/login/",
        "/login?next=/login",
        "//evil.example/",
        "https://evil.example",
        "/\\x",
        "",
    ):
        assert service.safe_next(refused) == "/", refused


def test_the_login_url_keeps_the_page_and_its_query_and_may_say_the_login_ended() -> None:
    assert service.login_url("/?session=abc") == "/login?next=/%3Fsession%3Dabc"
    assert (
        service.login_url("/?session=a&x=1", reason=service.LOGIN_ENDED)
        == "/login?next=/%3Fsession%3Da%26x%3D1&reason=ended"
    )
    assert service.login_url("//evil.example/", reason=service.LOGIN_ENDED) == "/login?next=/&reason=ended"
