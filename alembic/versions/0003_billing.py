"""billing: model prices, usage ledger, daily totals, user quotas, pending settlements

Revision ID: 0003
Revises: 0002

Seeds ``model_prices`` with a frozen copy of ``ventapp.billing.pricing.SEED_PRICES``
(migrations never import app code that may change later). Money is in micro-units
per million tokens.
"""

from datetime import UTC, datetime

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")

# model, input micro-units / Mtok, output micro-units / Mtok, currency
SEED = [
    ("gpt-4o-mini", 150_000, 600_000, "USD"),
    ("gpt-4o", 2_500_000, 10_000_000, "USD"),
    ("deepseek-chat", 2_000_000, 8_000_000, "CNY"),
    ("qwen-plus", 800_000, 2_000_000, "CNY"),
    ("scripted-demo", 100_000, 200_000, "CNY"),
]


def _str(length: int) -> sqlmodel.sql.sqltypes.AutoString:
    return sqlmodel.sql.sqltypes.AutoString(length=length)


def upgrade() -> None:
    prices = op.create_table(
        "model_prices",
        sa.Column("model", _str(128), nullable=False),
        sa.Column("input_micros_per_mtok", sa.BigInteger(), nullable=False),
        sa.Column("output_micros_per_mtok", sa.BigInteger(), nullable=False),
        sa.Column("currency", _str(3), nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("model"),
    )
    op.create_table(
        "usage_ledger",
        sa.Column("id", _str(255), nullable=False),
        sa.Column("run_id", _str(64), nullable=False),
        sa.Column("session_id", _str(64), nullable=False),
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("model", _str(128), nullable=False),
        sa.Column("call_key", _str(255), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("source", _str(16), nullable=False),
        sa.Column("main_thread", sa.Boolean(), nullable=False),
        sa.Column("cost_micros", sa.BigInteger(), nullable=False),
        sa.Column("currency", _str(3), nullable=True),
        sa.Column("priced", sa.Boolean(), nullable=False),
        sa.Column("usage_day", sa.Date(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("usage_ledger", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_usage_ledger_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_usage_ledger_run_id"), ["run_id"], unique=False)
        batch_op.create_index("ix_usage_ledger_user_day", ["user_name", "usage_day"], unique=False)
    op.create_table(
        "usage_daily",
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("usage_day", sa.Date(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("estimate_input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("estimate_output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("user_name", "usage_day"),
    )
    op.create_table(
        "user_quotas",
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("daily_token_limit", sa.Integer(), nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("user_name"),
    )
    op.create_table(
        "billing_pending",
        sa.Column("id", _str(36), nullable=False),
        sa.Column("run_id", _str(64), nullable=False),
        sa.Column("session_id", _str(64), nullable=False),
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("model", _str(128), nullable=False),
        sa.Column("calls", sa.JSON(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("usage_day", sa.Date(), nullable=False),
        sa.Column("occurred_at", TIMESTAMP, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("billing_pending", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_billing_pending_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_billing_pending_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_billing_pending_user_name"), ["user_name"], unique=False)

    now = datetime.now(UTC).replace(tzinfo=None)
    op.bulk_insert(
        prices,
        [
            {
                "model": model,
                "input_micros_per_mtok": input_price,
                "output_micros_per_mtok": output_price,
                "currency": currency,
                "updated_at": now,
            }
            for model, input_price, output_price, currency in SEED
        ],
    )


def downgrade() -> None:
    with op.batch_alter_table("billing_pending", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_billing_pending_user_name"))
        batch_op.drop_index(batch_op.f("ix_billing_pending_run_id"))
        batch_op.drop_index(batch_op.f("ix_billing_pending_created_at"))
    op.drop_table("billing_pending")
    op.drop_table("user_quotas")
    op.drop_table("usage_daily")
    with op.batch_alter_table("usage_ledger", schema=None) as batch_op:
        batch_op.drop_index("ix_usage_ledger_user_day")
        batch_op.drop_index(batch_op.f("ix_usage_ledger_run_id"))
        batch_op.drop_index(batch_op.f("ix_usage_ledger_created_at"))
    op.drop_table("usage_ledger")
    op.drop_table("model_prices")
