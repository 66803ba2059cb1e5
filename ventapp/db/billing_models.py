"""Billing tables: model prices, the usage ledger, daily totals, quotas and pending settlements.

Money is stored as integers in *micro-units* of the row's currency (1 CNY =
1,000,000 micro-CNY), so sums never drift the way floats do. Prices are per
million tokens, so ``cost_micros = tokens * price_micros_per_mtok / 1_000_000``.

The ledger has no foreign key to ``chat_sessions`` on purpose: deleting a
conversation must never delete what it cost.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from ventapp.db.models import IDENTITY, LONG_TEXT, TIMESTAMP, new_id, utcnow

CURRENCIES = ("CNY", "USD")
USAGE_SOURCES = ("provider", "estimate")


class ModelPrice(SQLModel, table=True):
    """The price of one model, per million tokens, in micro-units of ``currency``.

    Example: gpt-4o-mini at USD 0.15 / 0.60 per million tokens is stored as
    ``input_micros_per_mtok=150_000``, ``output_micros_per_mtok=600_000``.
    """

    __tablename__ = "model_prices"

    model: str = Field(primary_key=True, max_length=128)
    input_micros_per_mtok: int = Field(ge=0, sa_type=sa.BigInteger)
    output_micros_per_mtok: int = Field(ge=0, sa_type=sa.BigInteger)
    currency: str = Field(default="CNY", max_length=3)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)


class UsageLedger(SQLModel, table=True):
    """One model call as billed. ``id`` is ``f"{run_id}:{call_key}"``, so a run settles once.

    ``usage_day`` is the Asia/Shanghai calendar day of the settlement (see
    ``ventapp.billing.day``). ``priced`` is False when the model had no price and
    the call was billed at zero (``BILLING_ALLOW_UNPRICED=1``); ``currency`` is then None.
    """

    __tablename__ = "usage_ledger"
    __table_args__ = (sa.Index("ix_usage_ledger_user_day", "user_name", "usage_day"),)

    id: str = Field(primary_key=True, max_length=255)
    run_id: str = Field(index=True, max_length=64)
    session_id: str = Field(default="", max_length=64)
    user_name: str = Field(max_length=128, sa_type=IDENTITY)
    model: str = Field(max_length=128)
    call_key: str = Field(max_length=255)
    input_tokens: int = Field(default=0)
    output_tokens: int = Field(default=0)
    source: str = Field(max_length=16)
    main_thread: bool = Field(default=True)
    cost_micros: int = Field(default=0, sa_type=sa.BigInteger)
    currency: str | None = Field(default=None, max_length=3)
    priced: bool = Field(default=True)
    usage_day: date = Field(sa_type=sa.Date)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP, index=True)


class UsageDaily(SQLModel, table=True):
    """A user's running token totals for one Asia/Shanghai day (what the quota reads).

    Updated in the same transaction as the ledger rows it sums; ``estimate_*`` are
    the parts of the totals that came from the offline estimate, not the provider.
    """

    __tablename__ = "usage_daily"

    user_name: str = Field(primary_key=True, max_length=128, sa_type=IDENTITY)
    usage_day: date = Field(primary_key=True, sa_type=sa.Date)
    input_tokens: int = Field(default=0, sa_type=sa.BigInteger)
    output_tokens: int = Field(default=0, sa_type=sa.BigInteger)
    estimate_input_tokens: int = Field(default=0, sa_type=sa.BigInteger)
    estimate_output_tokens: int = Field(default=0, sa_type=sa.BigInteger)
    calls: int = Field(default=0)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)


class UserQuota(SQLModel, table=True):
    """A user's daily token limit (input + output tokens); 0 = unlimited.

    ``daily_token_limit`` is the limit in force (the user's own or an operator's);
    ``operator_limit`` the ceiling an operator set, up to which the user may set their own
    (None: ``TFAGENTS_DAILY_TOKEN_LIMIT`` is the ceiling). Users without a row get
    ``TFAGENTS_DAILY_TOKEN_LIMIT``.
    """

    __tablename__ = "user_quotas"

    user_name: str = Field(primary_key=True, max_length=128, sa_type=IDENTITY)
    daily_token_limit: int = Field(default=0, ge=0)
    operator_limit: int | None = Field(default=None, ge=0)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)


class BillingPending(SQLModel, table=True):
    """A settlement whose ledger write failed, kept for ``retry_pending`` (spec 002, "持久化结算").

    ``calls`` is the list of ``CallUsage`` dicts; ``occurred_at`` (UTC) fixes the usage
    day so a retry after midnight still books the day the tokens were used.
    ``input_tokens``/``output_tokens`` repeat the sums so quota checks can count them.
    """

    __tablename__ = "billing_pending"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=36)
    run_id: str = Field(index=True, max_length=64)
    session_id: str = Field(default="", max_length=64)
    user_name: str = Field(index=True, max_length=128, sa_type=IDENTITY)
    model: str = Field(max_length=128)
    calls: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    input_tokens: int = Field(default=0)
    output_tokens: int = Field(default=0)
    usage_day: date = Field(sa_type=sa.Date)
    occurred_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    attempts: int = Field(default=0)
    last_error: str = Field(default="", sa_type=LONG_TEXT)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP, index=True)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
