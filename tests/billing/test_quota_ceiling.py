"""A user's own daily limit and its ceiling (tester, 2 Dec): whatever a user lowered, they may raise
again up to what an operator set, else ``TFAGENTS_DAILY_TOKEN_LIMIT``; never above it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests.billing.conftest import make_settings
from ventapp.auth import roles
from ventapp.auth.service import AuthRejected, Caller
from ventapp.billing.guard import BillingRejected, precheck, quota_status, raisable_quota
from ventapp.billing.settlement import settle
from ventapp.billing.usage import CallUsage
from ventapp.config import Settings
from ventapp.db import billing_store

ALICE, OPS = Caller("alice"), Caller("ops", role="operator")


def _use(engine: sa.Engine, user: str, tokens_in: int, tokens_out: int) -> None:
    calls = [CallUsage("c1", tokens_in, tokens_out, "provider")]
    settle(engine, run_id=f"{user}-run", session_id="s", user_name=user, model="scripted-demo", calls=calls)


def test_the_ceiling_is_the_default_until_an_operator_sets_one(engine: sa.Engine) -> None:
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    assert roles.set_quota(engine, settings, ALICE, "alice", 10).daily_token_limit == 10
    assert roles.set_quota(engine, settings, ALICE, "alice", 1_000).daily_token_limit == 1_000
    with pytest.raises(AuthRejected) as refused:
        roles.set_quota(engine, settings, ALICE, "alice", 0)
    assert refused.value.details == {"max_daily_token_limit": 1_000}

    roles.set_quota(engine, settings, OPS, "alice", 0)  # the operator: unlimited
    roles.set_quota(engine, settings, ALICE, "alice", 50)
    status = roles.set_quota(engine, settings, ALICE, "alice", 0)
    assert (status.daily_token_limit, status.ceiling) == (0, 0), "back to the operator's 'unlimited'"


def test_with_no_default_a_user_may_always_go_back_to_unlimited(engine: sa.Engine) -> None:
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="0")
    roles.set_quota(engine, settings, ALICE, "alice", 100)
    assert roles.set_quota(engine, settings, ALICE, "alice", 0).remaining_tokens is None


def test_a_row_from_before_the_ceiling_column_keeps_an_operators_raise(engine: sa.Engine) -> None:
    """Before migration 0015 one column held both; a limit above the default was an operator's."""
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    billing_store.set_quota(engine, "alice", 5_000)  # as an operator's raise was stored then
    assert quota_status(engine, settings, "alice").ceiling == 5_000

    roles.set_quota(engine, settings, ALICE, "alice", 10)
    assert quota_status(engine, settings, "alice").ceiling == 5_000, "not lost on the user's first lowering"
    assert roles.set_quota(engine, settings, ALICE, "alice", 5_000).daily_token_limit == 5_000

    billing_store.set_quota(engine, "bob", 300)  # below the default: the user's own lowering
    assert quota_status(engine, settings, "bob").ceiling == 1_000


def _refused(engine: sa.Engine, settings: Settings, user: str) -> BillingRejected:
    with pytest.raises(BillingRejected) as caught:
        precheck(engine, settings, user)
    return caught.value


def test_a_quota_the_user_lowered_says_they_may_raise_it_on_the_usage_page(engine: sa.Engine) -> None:
    """Tester (2 Dec): refused for a limit they had lowered themselves, users read that only an
    operator could help; the refusal now names the usage page and the ceiling."""
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="1000")
    roles.set_quota(engine, settings, ALICE, "alice", 10)
    _use(engine, "alice", 8, 2)

    refused = _refused(engine, settings, "alice")
    assert (refused.status, refused.code, refused.key) == (429, "quota", "refusal.quota_raisable")
    assert refused.params["ceiling"] == 1_000
    assert refused.message.endswith(
        "can raise it again on the usage page, up to 1,000 (the limit an operator set)."
    )
    assert "用量页面" in refused.worded("zh-CN") and "最多 1,000 token" in refused.worded("zh-CN")
    assert "运维人员可以" not in refused.worded("zh-CN"), "not: only an operator can help"
    assert raisable_quota(refused.message) == (refused.key, refused.params), "the UI reads it back"

    roles.set_quota(engine, settings, OPS, "bob", 0)  # an operator: no limit; bob lowers his own
    roles.set_quota(engine, settings, Caller("bob"), "bob", 10)
    _use(engine, "bob", 10, 0)
    unlimited = _refused(engine, settings, "bob")
    assert unlimited.key == "refusal.quota_raisable_unlimited" and "或取消" in unlimited.worded("zh-CN")


def test_a_quota_at_its_ceiling_keeps_saying_an_operator_can_raise_it(engine: sa.Engine) -> None:
    settings = make_settings(TFAGENTS_DAILY_TOKEN_LIMIT="10")
    _use(engine, "alice", 10, 0)
    assert _refused(engine, settings, "alice").key == "refusal.quota"
    roles.set_quota(engine, settings, OPS, "bob", 20)  # the operator's limit is bob's ceiling
    _use(engine, "bob", 20, 0)
    refused = _refused(engine, settings, "bob")
    assert refused.key == "refusal.quota" and "ceiling" not in refused.params
    assert refused.worded("zh-CN").endswith("运维人员可以在用量页面提高你的每日额度。")
    assert raisable_quota(refused.message) is None
