"""execution_runs.resumed_at: when a paused run's current part began

An answer's duration is the agent's working time. A run that paused for a person's approval was
timed from its first start to its final save, so the wait for the person counted: an approval
given 20 s later read "24.8秒" for one second of work, one given the next morning "12 小时". A
resumed run's duration is now what its paused parts took (kept in ``duration_ms`` when it paused)
plus the time since it was last resumed, kept here. Rows written before stay NULL (a run that was
never resumed is timed from its start, as before).

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("execution_runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("resumed_at", sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql"), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("execution_runs", schema=None) as batch_op:
        batch_op.drop_column("resumed_at")
