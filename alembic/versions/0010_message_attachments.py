"""chat_messages.attachments: the files a sent message carried (issue 12, chips after compaction)

A reloaded page read a turn's attachment chips back from the graph state, where compaction
summarises old turns away: their chips were lost. The stored message keeps the list now. Rows
written before stay NULL (the UI still reads those from the graph state).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("attachments", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.drop_column("attachments")
