"""Roles (issue 15): operators and users on quotas, usage and the agent switches, in AUTH_MODE=none
with AUTH_NONE_OPERATORS and in AUTH_MODE=local with accounts."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.api.auth_support import add_account, auth_server, logged_in
from tests.api.sse_client import post_chat
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer


@pytest.fixture(scope="module", params=["none", "local"])
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    # A scripted server per mode: langchain-openai caches its HTTP client per base URL, and the
    # cached one belongs to the previous server's (closed) event loop.
    with (
        ScriptedServer() as llm,
        auth_server(
            tmp_path_factory.mktemp("data"),
            llm.base_url,
            AUTH_MODE=request.param,
            AUTH_NONE_OPERATORS="ops",
            TFAGENTS_DAILY_TOKEN_LIMIT="100000",
        ) as server,
    ):
        if request.param == "local":
            add_account("ops", role="operator")
        yield server


def _mode(api: ApiServer) -> str:
    return httpx.get(f"{api.url}/api/auth/me", params={"user_name": "x"}).json().get("mode", "local")


def _as(api: ApiServer, name: str) -> httpx.Client:
    """A client acting as ``name``: logged in (local) or stating it (none)."""
    if _mode(api) == "none":
        return httpx.Client(base_url=api.url, timeout=30, params={"user_name": name})
    add_account(name) if name != "ops" else None
    with logged_in(api.url, name) as client:
        return httpx.Client(base_url=api.url, timeout=30, cookies=client.cookies)


def test_a_user_sets_their_own_quota_up_to_the_default_and_back(api: ApiServer) -> None:
    """Tester, 2 Dec: a user who lowered theirs under today's usage could never raise it again."""
    name = f"u-{uuid.uuid4().hex[:6]}"
    with _as(api, name) as user:
        lowered = user.put("/api/usage/quota", json={"daily_token_limit": 5_000})
        assert lowered.status_code == 200 and lowered.json()["daily_token_limit"] == 5_000
        undone = user.put("/api/usage/quota", json={"daily_token_limit": 100_000})
        assert undone.status_code == 200 and undone.json()["daily_token_limit"] == 100_000, undone.text
        for higher in (100_001, 0):
            refused = user.put("/api/usage/quota", json={"daily_token_limit": higher})
            assert refused.status_code == 403 and refused.json()["code"] == "operator_only", higher
            assert refused.json()["max_daily_token_limit"] == 100_000
            assert refused.json()["message"].startswith("你自己的每日额度最多可设为 100,000 token")
        today = user.get("/api/usage/today").json()
        assert today["daily_token_limit"] == 100_000
        assert today["max_daily_token_limit"] == 100_000, "the ceiling /usage shows: the default"


def test_a_user_lowers_an_operators_quota_and_raises_it_back_to_it(api: ApiServer) -> None:
    name = f"u-{uuid.uuid4().hex[:6]}"
    with _as(api, name) as user, _as(api, "ops") as ops:
        assert (
            ops.put("/api/usage/quota", json={"daily_token_limit": 300_000, "for_user": name}).status_code
            == 200
        )
        assert user.put("/api/usage/quota", json={"daily_token_limit": 10}).status_code == 200
        back = user.put("/api/usage/quota", json={"daily_token_limit": 300_000})
        assert back.status_code == 200 and back.json()["remaining_tokens"] == 300_000, back.text
        refused = user.put("/api/usage/quota", json={"daily_token_limit": 300_001})
        assert refused.status_code == 403 and refused.json()["max_daily_token_limit"] == 300_000
        user.put("/api/usage/quota", json={"daily_token_limit": 10})
        today = user.get("/api/usage/today").json()  # tester: the ceiling was only on /usage
        assert (today["daily_token_limit"], today["max_daily_token_limit"]) == (10, 300_000)


def test_only_an_operator_sets_another_users_quota_or_raises_one(api: ApiServer) -> None:
    name, other = f"u-{uuid.uuid4().hex[:6]}", f"v-{uuid.uuid4().hex[:6]}"
    with _as(api, name) as user, _as(api, other), _as(api, "ops") as ops:
        refused = user.put("/api/usage/quota", json={"daily_token_limit": 1, "for_user": other})
        assert refused.status_code == 403
        raised = ops.put("/api/usage/quota", json={"daily_token_limit": 1_000_000, "for_user": name})
        assert raised.status_code == 200 and raised.json()["user_name"] == name
        assert user.get("/api/usage/today").json()["daily_token_limit"] == 1_000_000


def test_only_an_operator_reads_another_users_usage(api: ApiServer) -> None:
    name = f"u-{uuid.uuid4().hex[:6]}"
    with _as(api, name) as user, _as(api, "ops") as ops:
        response, frames = post_chat(user, message="hello", user_name=name)
        assert frames[-1]["type"] == "done", response.text
        refused = user.get("/api/usage/today", params={"for_user": "ops"})
        assert (
            refused.status_code == 403 and refused.json()["message"] == "只有运维人员可以查看其他用户的用量。"
        )
        assert refused.json()["detail"] == "Only an operator may see another user's usage.", (
            "detail stays English"
        )
        assert user.get("/api/usage/recent", params={"for_user": "ops"}).status_code == 403
        assert user.get("/api/usage/users").status_code == 403
        theirs = ops.get("/api/usage/today", params={"for_user": name}).json()
        assert theirs["user_name"] == name and theirs["total_tokens"] > 0
        listed = {item["user_name"] for item in ops.get("/api/usage/users").json()["items"]}
        assert name in listed


def test_the_agent_switches_are_for_operators(api: ApiServer) -> None:
    with _as(api, f"u-{uuid.uuid4().hex[:6]}") as user, _as(api, "ops") as ops:
        for response in (
            user.post("/api/model/thinking", json={"level": "default"}),
            user.post("/api/model/reload"),
        ):
            assert response.status_code == 403 and response.json()["code"] == "operator_only"
        assert ops.post("/api/model/thinking", json={"level": "default"}).status_code == 200


def test_the_account_routes_outside_their_mode_are_404_auth_off_worded_by_accept_language(
    api: ApiServer,
) -> None:
    """``auth_off`` was English in both fields: ``message`` follows ``Accept-Language``."""
    if _mode(api) != "none":
        pytest.skip("auth_off is the answer of AUTH_MODE=none")
    zh = httpx.get(f"{api.url}/api/auth/keys", params={"user_name": "ops"})
    en = httpx.get(f"{api.url}/api/auth/keys", params={"user_name": "ops"}, headers={"Accept-Language": "en"})
    assert zh.status_code == en.status_code == 404 and zh.json()["code"] == en.json()["code"] == "auth_off"
    assert (
        zh.json()["message"] == "这项功能需要 AUTH_MODE 为 local 或 header；本服务器运行的是 AUTH_MODE=none。"
    )
    assert (
        zh.json()["detail"]
        == en.json()["message"]
        == "This needs AUTH_MODE local or header; this server runs with AUTH_MODE=none."
    )


def test_an_operator_has_no_ceiling_and_an_operators_limit_reads_as_theirs(api: ApiServer) -> None:
    """Tester: ``max_daily_token_limit`` showed TFAGENTS_DAILY_TOKEN_LIMIT for an operator, who may set
    any limit; and a limit an operator set on a user read ``quota_source: "user"``."""
    name = f"u-{uuid.uuid4().hex[:6]}"
    with _as(api, name) as user, _as(api, "ops") as ops:
        own = ops.get("/api/usage/today").json()
        assert own["max_daily_token_limit"] is None, "an operator has no ceiling"
        assert ops.get("/api/usage/today", params={"for_user": "ops"}).json()["max_daily_token_limit"] is None
        assert user.get("/api/usage/today").json()["quota_source"] == "default"
        assert (
            ops.put("/api/usage/quota", json={"daily_token_limit": 300_000, "for_user": name}).status_code
            == 200
        )
        read = ops.get("/api/usage/today", params={"for_user": name}).json()
        assert (read["quota_source"], read["max_daily_token_limit"]) == ("operator", 300_000)
        assert user.get("/api/usage/today").json()["quota_source"] == "operator"
        lowered = user.put("/api/usage/quota", json={"daily_token_limit": 10})
        assert lowered.status_code == 200 and lowered.json()["quota_source"] == "user"
