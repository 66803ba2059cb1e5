"""schedules.lang: the language a schedule's runs word their figures in (the creator's)

API and scheduled runs drew the network solver's figures in Chinese whatever language the
person used. A schedule now keeps its creator's language (the page's, or the API request's
Accept-Language); rows written before stay NULL and read as zh-CN, the spec's default.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lang", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.drop_column("lang")
