"""schedules and their runs (one claim row per tick)

Revision ID: 0004
Revises: 0003

``uq_schedule_runs_tick`` on ``(schedule_id, scheduled_for)`` is what makes a tick fire
once however many processes serve the database: the insert decides the winner.
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")


def _str(length: int) -> sqlmodel.sql.sqltypes.AutoString:
    return sqlmodel.sql.sqltypes.AutoString(length=length)


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", _str(36), nullable=False),
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("name", _str(200), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("cron", _str(120), nullable=False),
        sa.Column("mode", _str(16), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("armed_at", TIMESTAMP, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_schedules_user_name"), ["user_name"], unique=False)
        batch_op.create_index(batch_op.f("ix_schedules_updated_at"), ["updated_at"], unique=False)
    op.create_table(
        "schedule_runs",
        sa.Column("id", _str(36), nullable=False),
        sa.Column("schedule_id", _str(36), nullable=False),
        sa.Column("user_name", _str(128), nullable=False),
        sa.Column("trigger", _str(16), nullable=False),
        sa.Column("scheduled_for", TIMESTAMP, nullable=False),
        sa.Column("status", _str(16), nullable=False),
        sa.Column("run_id", _str(36), nullable=True),
        sa.Column("session_id", _str(36), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("error_code", _str(32), nullable=True),
        sa.Column("claimed_at", TIMESTAMP, nullable=False),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("schedule_id", "scheduled_for", name="uq_schedule_runs_tick"),
    )
    with op.batch_alter_table("schedule_runs", schema=None) as batch_op:
        batch_op.create_index("ix_schedule_runs_schedule_status", ["schedule_id", "status"], unique=False)
        batch_op.create_index(batch_op.f("ix_schedule_runs_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_schedule_runs_user_name"), ["user_name"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("schedule_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_schedule_runs_user_name"))
        batch_op.drop_index(batch_op.f("ix_schedule_runs_run_id"))
        batch_op.drop_index("ix_schedule_runs_schedule_status")
    op.drop_table("schedule_runs")
    with op.batch_alter_table("schedules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_schedules_updated_at"))
        batch_op.drop_index(batch_op.f("ix_schedules_user_name"))
    op.drop_table("schedules")
