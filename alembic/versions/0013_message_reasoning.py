"""chat_messages.reasoning: the model's reasoning kept with its answer

The reasoning block of an answer streamed live but was never stored: after a reload, in another
tab or in ``GET /api/chat/history`` a finished answer had lost it. The answer keeps it now (a
paragraph per model call, cut at 100,000 characters), finished or partial alike. Rows written
before stay NULL (no reasoning shown). ``LONGTEXT`` on MySQL/MariaDB, whose ``TEXT`` holds only
64 KB (revision 0009).

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("reasoning", sa.Text().with_variant(mysql.LONGTEXT(), "mysql"), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.drop_column("reasoning")
