"""user_quotas.operator_limit: the ceiling an operator set, kept apart from the user's own limit

A user could lower their own daily quota but never raise it, so one who set it at or below
today's usage locked themselves out until midnight with no undo (tester, 2 Dec). A user may now
set any limit up to their ceiling: the operator's (this column) or ``TFAGENTS_DAILY_TOKEN_LIMIT``.
One column could not tell the two apart, so an operator's raise was lost on the user's first
lowering. Rows written before stay NULL (see ``ventapp.auth.roles.quota_ceiling`` for how an old
row above the default still counts as an operator's).

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("user_quotas", schema=None) as batch_op:
        batch_op.add_column(sa.Column("operator_limit", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("user_quotas", schema=None) as batch_op:
        batch_op.drop_column("operator_limit")
