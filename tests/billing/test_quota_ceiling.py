"""A user's own daily limit and its ceiling (tester, 2 Dec): whatever a user lowered, they may raise
again up to what an operator set, else ``TFAGENTS_DAILY_TOKEN_LIMIT``; never above it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests.billing.conftest import make_settings
from ventapp.auth import roles
from ventapp.auth.service import AuthRejected, Caller
from ventapp.billing.guard import quota_status
from ventapp.db import billing_store

ALICE, OPS = Caller("alice"), Caller("ops", role="operator")


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
