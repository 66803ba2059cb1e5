"""execution_runs.partial: the answer so far, saved while a run streams

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("execution_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("partial", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("execution_runs", schema=None) as batch_op:
        batch_op.drop_column("partial")
