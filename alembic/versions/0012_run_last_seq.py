"""execution_runs.last_seq: the last frame number of a run's paused part

A resumed run numbers its frames on after its paused part, so a client's ``Last-Event-ID``
neither skips nor repeats frames. The run log kept that number only while the paused part's log
lived (``RUN_LOG_TTL_S``, 60 s by default): an approval given later started again at 1, and a
client reconnecting with its last id silently missed the start of the answer. The number is now
kept with the run when it pauses; rows written before stay NULL (numbering as before).

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("execution_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_seq", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("execution_runs", schema=None) as batch_op:
        batch_op.drop_column("last_seq")
