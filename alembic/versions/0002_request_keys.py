"""request keys for chat de-duplication

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def upgrade() -> None:
    op.create_table(
        "request_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_name", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("request_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("session_id", sqlmodel.sql.sqltypes.AutoString(length=36), nullable=False),
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=36), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("expires_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("user_name", "request_id", name="uq_request_keys_user_request"),
    )
    with op.batch_alter_table("request_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_request_keys_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("request_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_request_keys_expires_at"))
    op.drop_table("request_keys")
