"""Scheduled agent runs: schedules and one row per tick or manual run (SQLModel).

``schedules`` is the one source of truth for what fires when: the in-process
APScheduler jobs are rebuilt from it at start-up and whenever it changes.

``schedule_runs`` holds one row per claimed tick. The unique
``(schedule_id, scheduled_for)`` constraint is the claim: whichever process inserts the
row first fires the tick, every other process's insert fails, so a tick runs exactly
once however many processes serve the database (DESIGN.md, "Scale-out").

A row that handed its execution to the pipeline links the ``execution_runs`` row
(``run_id``); from then on the run's status, error, times and tokens are read from that
row, so a run resumed from the chat after an approval reports its final status here
without a second copy of it (spec 002: 从聊天恢复后同步结果状态). Rows that never reached
the pipeline keep their own status: ``skipped``, ``missed``, ``rejected`` (with the
admission's code), or ``interrupted``.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from ventapp.db.models import IDENTITY, LONG_TEXT, TIMESTAMP, new_id, utcnow

SCHEDULE_MODES = ("plan", "full")
TRIGGERS = ("cron", "manual")
CLAIM_STATUSES = ("running", "skipped", "missed", "rejected", "failed", "interrupted", "success", "cancelled")
"""Statuses a schedule run holds itself; a linked run reads its ``execution_runs`` status (until its
conversation is deleted: then the run's outcome is copied here, see ``schedule_store.keep_outcomes``)."""
SESSION_DELETED = "session_deleted"
"""``error_code`` of a schedule run whose conversation was deleted while the run was unfinished."""


class Schedule(SQLModel, table=True):
    """A prompt the agent runs on a cron expression, on behalf of ``user_name``.

    ``cron`` is a five-field crontab expression evaluated in ``SCHEDULER_TZ``.
    ``armed_at`` (UTC) is when the current expression started to count: ticks before it
    are never reported as missed (a paused or just-edited schedule owes nothing).
    """

    __tablename__ = "schedules"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=36)
    user_name: str = Field(index=True, max_length=128, sa_type=IDENTITY)
    name: str = Field(max_length=200)
    prompt: str = Field(sa_type=LONG_TEXT)
    cron: str = Field(max_length=120)
    mode: str = Field(default="full", max_length=16)
    enabled: bool = Field(default=True)
    lang: str | None = Field(default=None, max_length=16)
    """The language its runs word their files in (figures): the page's, or the API request's
    ``Accept-Language``, when it was created; None (older rows) reads as ``zh-CN``."""
    armed_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP, index=True)


class ScheduleRun(SQLModel, table=True):
    """One claimed tick (``trigger="cron"``) or "run now" (``trigger="manual"``) of a schedule.

    ``scheduled_for`` (UTC) is the tick's fire time, or the moment "run now" was pressed.
    ``status`` is one of ``CLAIM_STATUSES``; once ``run_id`` is set the effective status
    is the linked ``execution_runs`` row's.
    """

    __tablename__ = "schedule_runs"
    __table_args__ = (
        sa.UniqueConstraint("schedule_id", "scheduled_for", name="uq_schedule_runs_tick"),
        sa.Index("ix_schedule_runs_schedule_status", "schedule_id", "status"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=36)
    schedule_id: str = Field(foreign_key="schedules.id", max_length=36, ondelete="CASCADE")
    user_name: str = Field(index=True, max_length=128, sa_type=IDENTITY)
    trigger: str = Field(max_length=16)
    scheduled_for: datetime = Field(sa_type=TIMESTAMP)
    status: str = Field(default="running", max_length=16)
    run_id: str | None = Field(default=None, max_length=36, index=True)
    session_id: str | None = Field(default=None, max_length=36)
    error: str | None = Field(default=None, sa_type=LONG_TEXT)
    error_code: str | None = Field(default=None, max_length=32)
    claimed_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    finished_at: datetime | None = Field(default=None, sa_type=TIMESTAMP)
