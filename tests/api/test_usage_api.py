"""Usage, quota, pricing and billing-health routes over real HTTP (spec 002, "会话与用量").

Usage is booked straight through ``ventapp.billing.settlement.settle`` on the server's
own engine; the last three tests check the run pipeline's billing wiring (pitfall 9:
a chat run must reach the ledger; quota and price are checked before the model is called).
"""

from __future__ import annotations

import uuid

import httpx
import pytest
import sqlalchemy as sa

from tests.api.sse_client import post_chat
from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.runtime import get_runtime
from ventapp.api.errors import error_response
from ventapp.billing.guard import BillingRejected
from ventapp.billing.settlement import settle
from ventapp.billing.usage import CallUsage
from ventapp.db import billing_store


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


def _engine() -> sa.Engine:
    return get_runtime().engine


def _book(user: str, run_id: str, calls: list[CallUsage]) -> None:
    settle(_engine(), run_id=run_id, session_id="s", user_name=user, model="scripted-demo", calls=calls)


def test_pricing_lists_seeded_models_and_the_configured_one(client: httpx.Client) -> None:
    body = client.get("/api/usage/pricing").json()

    models = {item["model"]: item for item in body["items"]}
    assert body["model"] == "scripted-demo"
    assert {"gpt-4o-mini", "gpt-4o", "deepseek-chat", "qwen-plus", "scripted-demo"} <= set(models)
    assert models["gpt-4o-mini"]["input_micros_per_mtok"] == 150_000
    assert models["gpt-4o-mini"]["input_per_mtok"] == "0.15" and models["gpt-4o-mini"]["currency"] == "USD"


def test_pricing_of_unknown_model_is_404(client: httpx.Client) -> None:
    response = client.get("/api/usage/pricing/no-such-model")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert client.get("/api/usage/pricing/scripted-demo").json()["currency"] == "CNY"


def test_today_is_zero_for_a_new_user_and_splits_sources_after_usage(client: httpx.Client) -> None:
    user = _user()
    empty = client.get("/api/usage/today", params={"user_name": user}).json()
    assert (empty["total_tokens"], empty["calls"], empty["cost"], empty["remaining_tokens"]) == (
        0,
        0,
        [],
        None,
    )

    _book(user, "run-a", [CallUsage("m1", 1_000, 100, "provider"), CallUsage("m2", 0, 25, "estimate")])
    body = client.get("/api/usage/today", params={"user_name": user}).json()

    assert (body["input_tokens"], body["output_tokens"], body["calls"]) == (1_000, 125, 2)
    assert body["by_source"]["provider"] == {"input_tokens": 1_000, "output_tokens": 100}
    assert body["by_source"]["estimate"] == {"input_tokens": 0, "output_tokens": 25}
    assert body["cost"][0]["currency"] == "CNY" and body["cost"][0]["cost_micros"] > 0
    assert body["timezone"] == "Asia/Shanghai"


def test_recent_is_paged_newest_first(client: httpx.Client) -> None:
    user = _user()
    for index in range(3):
        _book(user, f"run-{index}", [CallUsage("k", 10 + index, 1, "provider")])

    page = client.get("/api/usage/recent", params={"user_name": user, "limit": 2}).json()
    rest = client.get("/api/usage/recent", params={"user_name": user, "limit": 2, "offset": 2}).json()

    assert page["total"] == 3 and [item["run_id"] for item in page["items"]] == ["run-2", "run-1"]
    assert [item["run_id"] for item in rest["items"]] == ["run-0"]
    assert page["items"][0]["source"] == "provider" and page["items"][0]["model"] == "scripted-demo"


@pytest.mark.parametrize(
    "params", [{"limit": "0"}, {"limit": "201"}, {"limit": "abc"}, {"offset": "-1"}, {"offset": "1.5"}]
)
def test_recent_bad_paging_is_422_json(client: httpx.Client, params: dict[str, str]) -> None:
    response = client.get("/api/usage/recent", params=params)
    assert response.status_code == 422
    assert response.json()["code"] == "bad_request" and "limit" in response.json()["message"]
    # The same ``errors`` list as every other 422, naming the parameter at fault.
    ((name, raw),) = params.items()
    assert response.json()["errors"] == [
        {
            "type": "value_error",
            "loc": ["query", name],
            "msg": response.json()["errors"][0]["msg"],
            "input": raw,
        }
    ]


def test_put_quota_sets_the_users_own_limit(client: httpx.Client) -> None:
    user = _user()
    _book(user, "run-q", [CallUsage("k", 300, 100, "provider")])

    response = client.put("/api/usage/quota", params={"user_name": user}, json={"daily_token_limit": 1_000})

    assert response.status_code == 200
    assert response.json() == {
        "user_name": user,
        "daily_token_limit": 1_000,
        "quota_source": "user",
        "used_tokens": 400,
        "remaining_tokens": 600,
    }
    today = client.get("/api/usage/today", params={"user_name": user}).json()
    assert (today["daily_token_limit"], today["remaining_tokens"]) == (1_000, 600)
    assert "max_daily_token_limit" in today and today["max_daily_token_limit"] is None, "不限, as on /usage"
    # No TFAGENTS_DAILY_TOKEN_LIMIT here: the ceiling is "unlimited", so the user may undo their own.
    raised = client.put("/api/usage/quota", params={"user_name": user}, json={"daily_token_limit": 0})
    assert raised.status_code == 200 and raised.json()["remaining_tokens"] is None


@pytest.mark.parametrize(
    "body",
    [
        b'{"daily_token_limit": -1}',
        b'{"daily_token_limit": 1.5}',
        b'{"daily_token_limit": "100"}',
        b'{"daily_token_limit": true}',
        b'{"daily_token_limit": 99999999999}',
        b"{}",
        b"[]",
        b"not json",
        b"",
    ],
)
def test_put_quota_bad_body_is_422_json(client: httpx.Client, body: bytes) -> None:
    user = _user()
    response = client.put("/api/usage/quota", params={"user_name": user}, content=body)

    assert response.status_code == 422
    assert response.json()["code"] == "bad_request" and "daily_token_limit" in response.json()["message"]
    assert billing_store.get_quota(_engine(), user) is None


def test_run_usage_is_404_for_unknown_or_foreign_runs(client: httpx.Client) -> None:
    owner, other = _user(), _user()
    _book(owner, "run-owned", [CallUsage("k", 5, 5, "provider")])

    assert client.get("/api/usage/runs/run-owned", params={"user_name": owner}).json()["items"][0]["id"] == (
        "run-owned:k"
    )
    assert client.get("/api/usage/runs/run-owned", params={"user_name": other}).status_code == 404
    assert client.get("/api/usage/runs/never-ran", params={"user_name": owner}).status_code == 404


def test_billing_health_reports_price_and_pending(client: httpx.Client) -> None:
    body = client.get("/api/health/billing").json()
    assert body["model"] == "scripted-demo" and body["priced"] is True
    assert body["status"] in ("ok", "degraded") and isinstance(body["pending_settlements"], int)


def test_quota_rejection_renders_as_429_json_with_retry_after() -> None:
    """The body an API answers when :func:`precheck` refuses (the lead maps it in ``start_chat``)."""
    exc = BillingRejected(429, "quota", "You have used 1,000 of your 1,000 tokens for today.", retry_after=60)
    response = error_response(exc.status, exc.code, exc.message, retry_after=exc.retry_after)

    assert response.status_code == 429 and response.headers["retry-after"] == "60"
    assert response.body == (
        b'{"detail":"You have used 1,000 of your 1,000 tokens for today.","message":"You have used 1,000 '
        b'of your 1,000 tokens for today.","code":"quota","retry_after":60}'
    )


# --- the pipeline's billing wiring (pitfall 9) -------------------------------------------------


def test_chat_books_exactly_the_done_usage_in_the_ledger(client: httpx.Client) -> None:
    user = _user()
    response, frames = post_chat(client, message="please calculate (12+8)*3", user_name=user)
    assert response.status_code == 200
    done = frames[-1]
    assert done["type"] == "done"

    rows = client.get(f"/api/usage/runs/{done['run_id']}", params={"user_name": user}).json()["items"]
    assert sum(row["input_tokens"] for row in rows) == done["usage"]["input_tokens"] > 0
    assert sum(row["output_tokens"] for row in rows) == done["usage"]["output_tokens"]
    assert len(rows) == done["usage"]["model_calls"] and {row["source"] for row in rows} == {"provider"}
    today = client.get("/api/usage/today", params={"user_name": user}).json()
    assert today["total_tokens"] == done["usage"]["total_tokens"]


def test_chat_over_quota_is_429_before_the_model_is_called(client: httpx.Client, llm: ScriptedServer) -> None:
    user = _user()
    _book(user, "earlier", [CallUsage("k", 90, 10, "provider")])
    client.put("/api/usage/quota", params={"user_name": user}, json={"daily_token_limit": 100})

    response, frames = post_chat(client, message="hello", user_name=user)
    english = client.post(
        "/api/chat",
        files={"message": (None, "hello"), "user_name": (None, user)},
        headers={"Accept-Language": "en"},
    )

    missing, _ = post_chat(client, message="hello", user_name=user, session_id=str(uuid.uuid4()))

    assert response.status_code == 429 and frames == []
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found"), (
        "no such session, whatever the quota"
    )
    body = response.json()
    assert body["code"] == "quota" and body["retry_after"] > 0 and response.headers["retry-after"]
    assert llm.requests() == []
    # ``message`` in Accept-Language (zh-CN by default), ``detail`` the English sentence as before.
    sentence = "Tokens used today: 100 of your daily quota of 100. The quota resets at 00:00 Asia/Shanghai"
    assert body["detail"].startswith(sentence) and english.json()["detail"] == body["detail"]
    assert english.json()["message"] == body["detail"] and english.json()["code"] == "quota"
    assert body["message"].startswith("你今天已用 100 个 token，每日额度为 100。")
    # Tester (2 Dec): the user lowered the limit themselves (no ceiling here): they can raise it.
    assert body["message"].endswith("你可以在用量页面把它调高或取消（运维人员没有设上限）。")
    assert body["detail"].endswith(
        "can raise it again on the usage page, or remove it (an operator set no limit)."
    )

    billing_store.set_quota(_engine(), user, 100, operator_limit=100)  # now the operator's ceiling
    at_ceiling = client.post("/api/chat", files={"message": (None, "hello"), "user_name": (None, user)})
    assert at_ceiling.status_code == 429 and at_ceiling.json()["code"] == "quota"
    assert at_ceiling.json()["message"].endswith("运维人员可以在用量页面提高你的每日额度。")
    assert at_ceiling.json()["detail"].endswith("an operator can raise your daily limit on the usage page.")


def test_chat_with_unpriced_model_is_503_before_the_model_is_called(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    engine = _engine()
    saved = billing_store.get_price(engine, "scripted-demo")
    assert saved is not None
    with engine.begin() as connection:
        connection.execute(sa.text("DELETE FROM model_prices WHERE model = 'scripted-demo'"))
    try:
        response, _ = post_chat(client, message="hello", user_name=_user())
        assert response.status_code == 503 and response.json()["code"] == "model_unpriced"
        assert "scripted-demo" in response.json()["message"]
        assert llm.requests() == []
    finally:
        billing_store.upsert_price(
            engine, saved.model, saved.input_micros_per_mtok, saved.output_micros_per_mtok, saved.currency
        )


def test_put_quota_takes_the_caller_from_the_body_and_refuses_unknown_fields(client: httpx.Client) -> None:
    """Tester: ``{"user_name": …}`` in the body was ignored and ``default``'s quota changed instead."""
    user = _user()

    named = client.put("/api/usage/quota", json={"user_name": user, "daily_token_limit": 1_000})
    assert named.status_code == 200 and named.json()["user_name"] == user
    assert billing_store.get_quota(_engine(), user) is not None
    assert billing_store.get_quota(_engine(), "default") is None

    twice = client.put(
        "/api/usage/quota", params={"user_name": _user()}, json={"user_name": user, "daily_token_limit": 5}
    )
    unknown = client.put(
        "/api/usage/quota", params={"user_name": user}, json={"daily_token_limit": 5, "bogus": 1}
    )
    assert twice.status_code == 422 and twice.json()["code"] == "bad_request"
    assert unknown.status_code == 422 and unknown.json()["unknown_fields"] == ["bogus"]
    assert billing_store.get_quota(_engine(), user).daily_token_limit == 1_000, "nothing changed"


def test_the_usage_routes_refusals_word_message_by_accept_language(client: httpx.Client) -> None:
    """They were English in both fields: ``message`` follows ``Accept-Language`` (default Chinese),
    ``detail`` stays the English sentence, ``code`` and ``errors`` unchanged."""
    user = _user()
    requests = {
        "之间的整数": (
            "GET",
            "/api/usage/recent",
            {"limit": "0"},
            None,
            "limit must be a whole number from 1 to",
        ),
        "请发送 JSON": ("PUT", "/api/usage/quota", {"user_name": user}, b"{}", "Send JSON"),
        "只需说明一次": (
            "PUT",
            "/api/usage/quota",
            {"user_name": user},
            b'{"user_name": "other", "daily_token_limit": 5}',
            "Name the caller once",
        ),
        "没有记入": ("GET", "/api/usage/runs/never-ran", {"user_name": user}, None, "No usage is booked"),
        "没有价格": (
            "GET",
            "/api/usage/pricing/no-such-model",
            {},
            None,
            "The model 'no-such-model' has no price.",
        ),
    }
    for chinese, (method, path, params, body, english) in requests.items():
        zh = client.request(method, path, params=params, content=body)
        en = client.request(method, path, params=params, content=body, headers={"Accept-Language": "en"})
        assert zh.status_code == en.status_code and zh.status_code in (404, 422), path
        assert zh.json()["detail"] == en.json()["detail"] == en.json()["message"], path
        assert en.json()["detail"].startswith(english), en.json()
        assert zh.json()["code"] == en.json()["code"] and zh.json().get("errors") == en.json().get("errors")
        assert chinese in zh.json()["message"], zh.json()
