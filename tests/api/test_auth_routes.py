"""AUTH_MODE=local over real HTTP: login, cookie, API keys, logout, password change, throttling (issue 15)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.api.auth_support import PASSWORD, add_account, auth_server, logged_in, with_key
from tests.api.sse_client import post_chat
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, patched_env
from ventapp.api import deps
from ventapp.api.app import create_api


@pytest.fixture(scope="module")
def api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with auth_server(
        tmp_path_factory.mktemp("data"),
        llm.base_url,
        AUTH_MODE="local",
        AUTH_LOGIN_MAX_FAILURES="3",
        AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS="50",
    ) as server:
        yield server


def _name() -> str:
    return f"user-{uuid.uuid4().hex[:8]}"


def test_anonymous_is_401_in_the_one_error_shape(api: ApiServer) -> None:
    response = httpx.get(f"{api.url}/api/sessions")
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == "unauthenticated"
    # Tester: the 401 was English under the default zh-CN; detail keeps the English sentence.
    assert body["message"] == "请先登录，或以 'Authorization: Bearer …' 发送个人 API 密钥。"
    assert body["detail"] == "Log in first, or send a personal API key as 'Authorization: Bearer …'."
    assert response.headers["www-authenticate"].startswith("Bearer")
    chat, _ = post_chat(httpx.Client(base_url=api.url), message="hi", user_name="alice")
    assert chat.status_code == 401 and chat.json()["message"] == body["message"]
    english, _ = post_chat(httpx.Client(base_url=api.url, headers={"Accept-Language": "en"}), message="hi")
    assert english.json()["message"] == english.json()["detail"] == body["detail"]
    key = httpx.get(f"{api.url}/api/sessions", headers={"Authorization": "Bearer va_nope"}).json()
    assert (key["code"], key["message"]) == ("unauthenticated", "API 密钥无效（不存在或已撤销）。")


def test_a_wrong_password_is_401_bad_credentials_worded_per_accept_language(api: ApiServer) -> None:
    name = add_account(_name())
    wrong = {"user_name": name, "password": "wrong-wrong"}
    chinese = httpx.post(f"{api.url}/api/auth/login", json=wrong).json()
    english = httpx.post(f"{api.url}/api/auth/login", json=wrong, headers={"Accept-Language": "en"}).json()
    assert chinese["code"] == english["code"] == "bad_credentials"
    assert chinese["message"] == "用户名或密码错误。"
    assert (
        english["message"]
        == chinese["detail"]
        == english["detail"]
        == "The user name or the password is wrong."
    )
    assert httpx.get(f"{api.url}/health").status_code in (200, 503), "health stays public"


def test_login_sets_an_http_only_lax_cookie_and_the_session_works(api: ApiServer) -> None:
    name = add_account(_name())
    with httpx.Client(base_url=api.url) as client:
        response = client.post("/api/auth/login", json={"user_name": name, "password": PASSWORD})
        assert response.status_code == 200
        assert response.json() == {
            "mode": "local",
            "verified": True,
            "user_name": name,
            "role": "user",
            "method": "session",
        }
        cookie = response.headers["set-cookie"].lower()
        assert "ventagent_session=" in cookie and "httponly" in cookie and "samesite=lax" in cookie
        assert "secure" not in cookie, "plain HTTP from a client that is not a trusted proxy"
        assert client.get("/api/sessions").status_code == 200
        assert client.get("/api/auth/me").json()["user_name"] == name


def test_a_wrong_password_and_an_unknown_account_answer_alike(api: ApiServer) -> None:
    name = add_account(_name())
    wrong = httpx.post(f"{api.url}/api/auth/login", json={"user_name": name, "password": "nope-nope-nope"})
    unknown = httpx.post(f"{api.url}/api/auth/login", json={"user_name": _name(), "password": PASSWORD})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert "set-cookie" not in wrong.headers


def test_login_refuses_an_unsafe_name_with_the_rule_of_every_route(api: ApiServer) -> None:
    refused = httpx.post(f"{api.url}/api/auth/login", json={"user_name": "ops/admin", "password": PASSWORD})
    assert refused.status_code == 400 and refused.json()["code"] == "bad_request"
    assert "(not '/')" in refused.json()["detail"] and "set-cookie" not in refused.headers
    # ``message`` in Accept-Language (default Chinese): the name rule's sentence of every route.
    assert "（不能包含 '/'）" in refused.json()["message"]


def test_a_stated_user_name_is_ignored_and_logged(api: ApiServer, caplog: pytest.LogCaptureFixture) -> None:
    alice, bob = add_account(_name()), add_account(_name())
    with logged_in(api.url, alice) as client, caplog.at_level(logging.WARNING, logger="ventapp.api.deps"):
        response, frames = post_chat(client, message="hello from alice", user_name=bob)
        assert response.status_code == 200 and frames[-1]["type"] == "done"
        session_id = response.headers["x-session-id"]
        assert [
            s["id"] for s in client.get("/api/sessions", params={"user_name": bob}).json()["sessions"]
        ] == [session_id], "the query's user_name is ignored too: alice sees her own session"
    assert any(bob in record.getMessage() and alice in record.getMessage() for record in caplog.records)
    with logged_in(api.url, bob) as as_bob:
        assert as_bob.get("/api/sessions").json()["sessions"] == []
        assert as_bob.get(f"/api/chat/history/{session_id}").status_code == 404


def test_an_api_key_is_shown_once_works_on_chat_and_dies_when_revoked(api: ApiServer) -> None:
    name = add_account(_name())
    with logged_in(api.url, name) as client:
        created = client.post("/api/auth/keys", json={"name": "legacy frontend"})
        assert created.status_code == 201
        key = created.json()["key"]
        assert key.startswith("va_")
        listed = client.get("/api/auth/keys").json()["items"]
        assert [item["name"] for item in listed] == ["legacy frontend"]
        assert key not in client.get("/api/auth/keys").text, "the secret is shown once only"
        with with_key(api.url, key) as legacy:
            response, frames = post_chat(legacy, message="from the legacy page", user_name="someone-else")
            assert response.status_code == 200 and frames[-1]["type"] == "done"
            assert legacy.get("/api/auth/me").json()["user_name"] == name
            assert client.delete(f"/api/auth/keys/{created.json()['id']}").status_code == 204
            refused = legacy.get("/api/sessions")
            assert refused.status_code == 401 and refused.json()["code"] == "unauthenticated"
        assert client.get("/api/auth/keys").json()["items"][0]["active"] is False


def test_another_users_key_cannot_be_revoked(api: ApiServer) -> None:
    alice, bob = add_account(_name()), add_account(_name())
    with logged_in(api.url, alice) as as_alice, logged_in(api.url, bob) as as_bob:
        key_id = as_alice.post("/api/auth/keys", json={}).json()["id"]
        assert as_bob.delete(f"/api/auth/keys/{key_id}").status_code == 404
        assert as_alice.get("/api/auth/keys").json()["items"][0]["active"] is True


def test_a_weak_password_and_an_unknown_key_word_message_by_accept_language(api: ApiServer) -> None:
    """They were English in both fields: ``message`` follows ``Accept-Language``, ``detail`` English."""
    name = add_account(_name())
    weak_body = {"current_password": PASSWORD, "new_password": "short"}
    with logged_in(api.url, name) as client:
        answers = {
            "weak": [
                client.post("/api/auth/password", json=weak_body, headers={"Accept-Language": lang})
                for lang in ("zh-CN", "en")
            ],
            "key": [
                client.delete("/api/auth/keys/va_nope", headers={"Accept-Language": lang})
                for lang in ("zh-CN", "en")
            ],
        }
    (weak_zh, weak_en), (key_zh, key_en) = answers["weak"], answers["key"]
    assert weak_zh.status_code == weak_en.status_code == 400
    assert weak_zh.json()["code"] == weak_en.json()["code"] == "weak_password"
    assert weak_zh.json()["message"] == "密码至少要有 10 个字符。"
    assert (
        weak_zh.json()["detail"]
        == weak_en.json()["message"]
        == "The password must have at least 10 characters."
    )
    assert key_zh.status_code == key_en.status_code == 404 and key_zh.json()["code"] == "not_found"
    assert key_zh.json()["message"] == "你没有这个 id 的 API 密钥。"
    assert key_zh.json()["detail"] == key_en.json()["message"] == "You have no API key with this id."


def test_logout_ends_the_session_on_the_server(api: ApiServer) -> None:
    name = add_account(_name())
    with logged_in(api.url, name) as client:
        token = client.cookies["ventagent_session"]
        response = client.post("/api/auth/logout")
        assert response.status_code == 204
        assert (
            'ventagent_session=""' in response.headers["set-cookie"]
            or "max-age=0" in response.headers["set-cookie"].lower()
        )
    replay = httpx.get(f"{api.url}/api/sessions", cookies={"ventagent_session": token})
    assert replay.status_code == 401, "a copied cookie is worthless after logout"


def test_password_change_needs_the_current_one_and_ends_other_sessions(api: ApiServer) -> None:
    name = add_account(_name())
    new = "a much better passphrase"
    with logged_in(api.url, name) as here, logged_in(api.url, name) as elsewhere:
        wrong = here.post("/api/auth/password", json={"current_password": "guess-guess", "new_password": new})
        assert wrong.status_code == 401
        weak = here.post("/api/auth/password", json={"current_password": PASSWORD, "new_password": "short"})
        assert weak.status_code == 400 and weak.json()["code"] == "weak_password"
        ok = here.post("/api/auth/password", json={"current_password": PASSWORD, "new_password": new})
        assert ok.status_code == 204
        assert here.get("/api/sessions").status_code == 200, "this session stays"
        assert elsewhere.get("/api/sessions").status_code == 401, "the others end"
    with logged_in(api.url, name, new):
        pass
    old = httpx.post(f"{api.url}/api/auth/login", json={"user_name": name, "password": PASSWORD})
    assert old.status_code == 401


def test_failed_logins_are_throttled_per_account_with_retry_after(api: ApiServer) -> None:
    name = add_account(_name())
    for _ in range(3):
        response = httpx.post(
            f"{api.url}/api/auth/login", json={"user_name": name, "password": "wrong-wrong"}
        )
        assert response.status_code == 401
    throttled = httpx.post(f"{api.url}/api/auth/login", json={"user_name": name, "password": PASSWORD})
    assert throttled.status_code == 429, "even the right password waits"
    body = throttled.json()
    assert body["code"] == "throttled" and int(throttled.headers["retry-after"]) == body["retry_after"] > 0
    assert type(body["retry_after"]) is int, "whole seconds, as the Retry-After header"
    # The window is AUTH_LOGIN_WINDOW_S (default 900 s): the sentence says it as a duration.
    minutes = -(-body["retry_after"] // 60)
    assert body["message"] == f"登录失败次数过多，请{minutes}分钟后再试。", body
    assert body["detail"] == f"Too many failed logins. Try again in {minutes} minutes.", body
    other = add_account(_name())
    with logged_in(api.url, other):
        pass  # another account from the same address is not locked out by one account's failures


def test_the_password_never_reaches_logs_or_responses(
    api: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    name = add_account(_name())
    secret = f"pw-{uuid.uuid4().hex}"
    with caplog.at_level(logging.DEBUG):
        bodies = [
            httpx.post(f"{api.url}/api/auth/login", json={"user_name": name, "password": secret}).text,
            httpx.post(
                f"{api.url}/api/auth/login/form", data={"user_name": name, "password": secret, "next": "/"}
            ).headers.get("location", ""),
        ]
        with logged_in(api.url, name) as client:
            bodies.append(
                client.post(
                    "/api/auth/password", json={"current_password": secret, "new_password": secret + "x"}
                ).text
            )
    assert all(secret not in body for body in bodies)
    assert secret not in caplog.text
    assert PASSWORD not in caplog.text


def test_the_login_form_redirects_with_the_cookie_or_an_error_code(api: ApiServer) -> None:
    name = add_account(_name())
    with httpx.Client(base_url=api.url) as client:
        bad = client.post("/api/auth/login/form", data={"user_name": name, "password": "x", "next": "/usage"})
        assert bad.status_code == 303 and bad.headers["location"].startswith("/login?error=bad_credentials")
        evil = client.post(
            "/api/auth/login/form", data={"user_name": name, "password": PASSWORD, "next": "//evil.example/"}
        )
        assert evil.status_code == 303 and evil.headers["location"] == "/", "never an open redirect"
        assert "httponly" in evil.headers["set-cookie"].lower()
        assert client.get("/api/auth/me").json()["user_name"] == name


def test_the_login_form_never_returns_to_the_login_page(api: ApiServer) -> None:
    """Found by trying it: after a logout, Back led to ``/login?next=/login``."""
    name = add_account(_name())
    with httpx.Client(base_url=api.url) as client:
        bad = client.post("/api/auth/login/form", data={"user_name": name, "password": "x", "next": "/login"})
        assert bad.headers["location"] == "/login?error=bad_credentials&next=/"
        for target in ("/login", "/login/", "/login?next=/login"):
            good = client.post(
                "/api/auth/login/form", data={"user_name": name, "password": PASSWORD, "next": target}
            )
            assert good.status_code == 303 and good.headers["location"] == "/", target


def test_the_login_form_returns_to_the_page_and_its_query(api: ApiServer) -> None:
    """``/?session=<id>`` must reopen that conversation after a login, through a failed attempt too."""
    name = add_account(_name())
    with httpx.Client(base_url=api.url) as client:
        back = "/?session=abc&x=1"
        bad = client.post("/api/auth/login/form", data={"user_name": name, "password": "x", "next": back})
        assert bad.headers["location"] == "/login?error=bad_credentials&next=/%3Fsession%3Dabc%26x%3D1"
        good = client.post(
            "/api/auth/login/form", data={"user_name": name, "password": PASSWORD, "next": back}
        )
        assert good.status_code == 303 and good.headers["location"] == back
        evil = client.post(
            "/api/auth/login/form",
            data={"user_name": name, "password": PASSWORD, "next": "//evil.com/?session=1"},
        )
        assert evil.headers["location"] == "/", "still never an open redirect"


def test_health_says_identities_are_verified(api: ApiServer) -> None:
    auth = httpx.get(f"{api.url}/health").json()["auth"]
    assert auth["mode"] == "local" and auth["verified"] is True


async def test_the_login_form_while_the_server_starts_comes_back_saying_starting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No runtime yet (still starting): the browser is sent back to the login page with
    ``error=starting``, not shown a JSON 503."""

    def starting() -> None:
        raise RuntimeError("the agent runtime is not open")

    # Another module's server may hold the process's runtime open: this app must not see it.
    monkeypatch.setattr(deps, "get_runtime", starting)
    with patched_env({"AUTH_MODE": "local"}):
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_api()), base_url="http://127.0.0.1"
        ) as client:
            response = await client.post(
                "/api/auth/login/form",
                data={"user_name": "ops", "password": PASSWORD, "next": "/usage"},
                headers={"origin": "http://127.0.0.1"},
            )
    assert response.status_code == 303, response.text
    assert response.headers["location"].startswith("/login?error=starting&next=/usage")
