"""user preferences and remembered approval rules

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def _str(length: int) -> sqlmodel.sql.sqltypes.AutoString:
    return sqlmodel.sql.sqltypes.AutoString(length=length)


def upgrade() -> None:
    op.create_table(
        "user_preferences",
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("user_name"),
    )
    op.create_table(
        "approval_rules",
        sa.Column("id", _str(36), nullable=False),
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("tool", _str(128), nullable=False),
        sa.Column("scope", _str(16), nullable=False),
        sa.Column("session_id", _str(36), nullable=True),
        sa.Column("except_call_ids", _str(2000), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("approval_rules", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_approval_rules_user_name"), ["user_name"], unique=False)
        batch_op.create_index(batch_op.f("ix_approval_rules_session_id"), ["session_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("approval_rules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_approval_rules_session_id"))
        batch_op.drop_index(batch_op.f("ix_approval_rules_user_name"))
    op.drop_table("approval_rules")
    op.drop_table("user_preferences")
