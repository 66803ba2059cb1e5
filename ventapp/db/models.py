"""Relational data: users' chat sessions, their messages and execution runs (SQLModel).

Timestamps carry microseconds (pitfall 8): a user message and its answer written in
the same second must still sort in the order they were said. SQLite stores them
as ISO text with microseconds; MySQL gets ``DATETIME(6)`` through the variant.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlmodel import JSON, Column, Field, SQLModel

TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql")
"""Column type with microsecond precision on every dialect (pitfall 8)."""
LONG_TEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql")
"""Unbounded text: MySQL/MariaDB's ``TEXT`` holds only 64 KB, a message up to 400 KB (migration 0009)."""
IDENTITY = sa.String(128).with_variant(
    mysql.VARCHAR(128, charset="utf8mb4", collation="utf8mb4_bin"), "mysql"
)
"""A ``user_name``: compared exactly on every engine; MySQL/MariaDB's default collation would let
"alice" match "Alice" (migration 0009)."""

RUN_STATUSES = ("running", "waiting_input", "success", "failed", "cancelled", "interrupted")
SESSION_MODES = ("full", "plan")


def utcnow() -> datetime:
    """Current UTC time as a naive datetime with microseconds (stored as UTC everywhere)."""
    return datetime.now(UTC).replace(tzinfo=None)


def iso_utc(moment: datetime | None) -> str | None:
    """A timestamp as every API answer writes it: ISO 8601 in UTC, microseconds, ``Z``.

    Args:
        moment: Aware (any zone), or naive UTC as the database stores it; None stays None.

    Returns:
        E.g. ``"2026-12-01T09:50:25.444809Z"``. The fixed width keeps text order equal to
        time order (pitfall 8), and the ``Z`` keeps browsers from reading it as local time.
    """
    if moment is None:
        return None
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return aware.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def new_id() -> str:
    """A new primary key: a UUID4 string (36 characters)."""
    return str(uuid.uuid4())


class ChatSession(SQLModel, table=True):
    """A conversation owned by ``user_name``. Its id is also the graph's thread_id (invariant 1)."""

    __tablename__ = "chat_sessions"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=36)
    user_name: str = Field(index=True, max_length=128, sa_type=IDENTITY)
    title: str = Field(default="New chat", max_length=200)
    pinned: bool = Field(default=False)
    mode: str = Field(default="full", max_length=16)
    route: str | None = Field(default=None, max_length=64)
    """The model route the session runs on (``MODELS``); None: the main one."""
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP, index=True)


class ChatMessage(SQLModel, table=True):
    """One message of a session. ``tool_calls`` and ``citations`` hold the cards as shown.

    ``tool_calls``: list of ``{tool_call_id, tool, cn_tool, args, content, error}``.
    ``citations``: list of ``{title, url, snippet, score}``.
    ``usage``: the run's usage dict for assistant messages (tokens), else empty.
    ``attachments``: a user message's files (``/workspace/uploads/<name>``); None for rows written
    before it was kept (revision 0010) and for answers.
    """

    __tablename__ = "chat_messages"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=36)
    session_id: str = Field(foreign_key="chat_sessions.id", index=True, max_length=36, ondelete="CASCADE")
    run_id: str | None = Field(default=None, max_length=36)
    role: str = Field(max_length=16)
    content: str = Field(default="", sa_type=LONG_TEXT)
    reasoning: str | None = Field(default=None, sa_type=LONG_TEXT)
    """An answer's streamed reasoning, a paragraph per model call; None for none and for rows
    written before it was kept (revision 0013)."""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    citations: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    usage: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON))
    attachments: list[str] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    status: str = Field(default="complete", max_length=16)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP, index=True)


class ExecutionRun(SQLModel, table=True):
    """One run of the pipeline: its status (one of ``RUN_STATUSES``), error and timings (ms)."""

    __tablename__ = "execution_runs"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=36)
    session_id: str = Field(foreign_key="chat_sessions.id", index=True, max_length=36, ondelete="CASCADE")
    user_name: str = Field(index=True, max_length=128, sa_type=IDENTITY)
    trace_id: str = Field(default="", max_length=64)
    kind: str = Field(default="chat", max_length=16)
    status: str = Field(default="running", max_length=16, index=True)
    error: str | None = Field(default=None, sa_type=LONG_TEXT)
    error_code: str | None = Field(default=None, max_length=32)
    input_tokens: int = Field(default=0)
    output_tokens: int = Field(default=0)
    started_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    finished_at: datetime | None = Field(default=None, sa_type=TIMESTAMP)
    duration_ms: int | None = Field(default=None)
    """The agent's working time (ms): start to final save, less any wait for a person. A paused run
    keeps the time its paused parts took here; its resumed part adds the time since ``resumed_at``."""
    first_token_ms: int | None = Field(default=None)
    partial: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    """While ``running``: the answer so far, saved every ``ANSWER_SAVE_INTERVAL_S``
    (``{content, reasoning, tool_calls, citations, usage, saved_at}``; ``saved_at`` ISO naive UTC, the
    save's time), so a crash loses at most that interval and its recovery knows when work last went on.
    Cleared when the run is finalised."""
    last_seq: int | None = Field(default=None)
    """When the run paused (``waiting_input``): the ``seq`` of its last frame, so its resumed part
    numbers on after it even once the run log has forgotten the paused part (``RUN_LOG_TTL_S``)."""
    resumed_at: datetime | None = Field(default=None, sa_type=TIMESTAMP)
    """When the run was last resumed after a pause (None if never): its current part's start."""


class RequestKey(SQLModel, table=True):
    """A client's ``request_id`` for one chat turn; the same user sending it again gets the original ids."""

    __tablename__ = "request_keys"
    __table_args__ = (sa.UniqueConstraint("user_name", "request_id", name="uq_request_keys_user_request"),)

    id: int | None = Field(default=None, primary_key=True)
    user_name: str = Field(max_length=128, sa_type=IDENTITY)
    request_id: str = Field(max_length=128)
    session_id: str = Field(max_length=36)
    run_id: str = Field(max_length=36)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    expires_at: datetime = Field(sa_type=TIMESTAMP, index=True)
