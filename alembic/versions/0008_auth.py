"""accounts, login sessions, API keys and login throttling (issue 15, real identities)

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def _str(length: int) -> sqlmodel.sql.sqltypes.AutoString:
    return sqlmodel.sql.sqltypes.AutoString(length=length)


def upgrade() -> None:
    op.create_table(
        "auth_accounts",
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("password_hash", _str(512), nullable=True),
        sa.Column("role", _str(16), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("user_name"),
    )
    op.create_table(
        "auth_sessions",
        sa.Column("token_hash", _str(64), nullable=False),
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("expires_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    with op.batch_alter_table("auth_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_auth_sessions_user_name"), ["user_name"], unique=False)
        batch_op.create_index(batch_op.f("ix_auth_sessions_expires_at"), ["expires_at"], unique=False)
    op.create_table(
        "auth_api_keys",
        sa.Column("id", _str(16), nullable=False),
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("name", _str(100), nullable=False),
        sa.Column("key_hash", _str(64), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("last_used_at", TIMESTAMP, nullable=True),
        sa.Column("revoked_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key_hash"),
    )
    with op.batch_alter_table("auth_api_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_auth_api_keys_user_name"), ["user_name"], unique=False)
    op.create_table(
        "auth_login_throttle",
        sa.Column("key", _str(200), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("window_start", TIMESTAMP, nullable=False),
        sa.Column("locked_until", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("auth_login_throttle")
    with op.batch_alter_table("auth_api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_auth_api_keys_user_name"))
    op.drop_table("auth_api_keys")
    with op.batch_alter_table("auth_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_auth_sessions_expires_at"))
        batch_op.drop_index(batch_op.f("ix_auth_sessions_user_name"))
    op.drop_table("auth_sessions")
    op.drop_table("auth_accounts")
