"""Storage side of session management: find, search, rename, pin, mode, delete, runs, usage.

Every function is synchronous, opens one short transaction and is scoped to an owner:
a session of another user reads as missing (``None`` / ``False``), so callers cannot
tell "not yours" from "does not exist". Async callers use ``asyncio.to_thread``.
Access only: validation of titles and modes belongs to the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, delete, select

from ventapp.db.chat_store import list_messages
from ventapp.db.models import ChatMessage, ChatSession, ExecutionRun
from ventapp.db.preference_models import ApprovalRule
from ventapp.db.schedule_store import keep_outcomes
from ventapp.text_rules import storable

LIKE_ESCAPE = "\\"


def _owned(db: Session, session_id: str, user_name: str) -> ChatSession | None:
    row = db.get(ChatSession, session_id)
    return row if row is not None and row.user_name == user_name else None


def get_owned_session(engine: Engine, session_id: str, user_name: str) -> ChatSession | None:
    """The session if ``user_name`` owns it, else None."""
    with Session(engine) as db:
        return _owned(db, session_id, user_name)


def like_pattern(text: str) -> str:
    """A ``LIKE`` pattern matching ``text`` anywhere, with ``%``, ``_`` and ``\\`` taken literally."""
    escaped = (
        text.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2)
        .replace("%", LIKE_ESCAPE + "%")
        .replace("_", LIKE_ESCAPE + "_")
    )
    return f"%{escaped}%"


def search_sessions(engine: Engine, user_name: str, query: str, limit: int = 200) -> Sequence[ChatSession]:
    """The user's sessions whose title contains ``query`` (case-insensitive), pinned first, then newest.

    A NUL in ``query`` is searched as U+FFFD, as stored text holds it (:func:`ventapp.text_rules.storable`):
    PostgreSQL refuses NUL even as a parameter.
    """
    query = storable(query)
    with Session(engine) as db:
        statement = (
            select(ChatSession)
            .where(ChatSession.user_name == user_name)
            .where(col(ChatSession.title).ilike(like_pattern(query), escape=LIKE_ESCAPE))
            .order_by(col(ChatSession.pinned).desc(), col(ChatSession.updated_at).desc())
            .limit(limit)
        )
        return db.exec(statement).all()


def update_session(engine: Engine, session_id: str, user_name: str, **changes: Any) -> ChatSession | None:
    """Set ``title``, ``pinned``, ``mode`` and/or ``route`` of an owned session; None if not the user's.

    ``updated_at`` is left alone: it orders the list by conversation activity, not edits.
    """
    unknown = set(changes) - {"title", "pinned", "mode", "route"}
    if unknown:
        raise ValueError(f"update_session cannot change {sorted(unknown)}")
    with Session(engine, expire_on_commit=False) as db:
        row = _owned(db, session_id, user_name)
        if row is None:
            return None
        for name, value in changes.items():
            setattr(row, name, value)
        db.add(row)
        db.commit()
        return row


def delete_session(engine: Engine, session_id: str, user_name: str) -> bool:
    """Delete an owned session with its messages, runs and session approval rules in one transaction;
    False if not the user's."""
    with Session(engine) as db:
        if _owned(db, session_id, user_name) is None:
            return False
        keep_outcomes(db, session_id)  # the schedule runs' outcomes outlive their conversation
        db.exec(delete(ChatMessage).where(col(ChatMessage.session_id) == session_id))
        db.exec(delete(ExecutionRun).where(col(ExecutionRun.session_id) == session_id))
        db.exec(delete(ApprovalRule).where(col(ApprovalRule.session_id) == session_id))
        db.exec(delete(ChatSession).where(col(ChatSession.id) == session_id))
        db.commit()
        return True


def get_owned_message(engine: Engine, message_id: str, user_name: str) -> ChatMessage | None:
    """A message whose session ``user_name`` owns, else None."""
    with Session(engine) as db:
        message = db.get(ChatMessage, message_id)
        if message is None or _owned(db, message.session_id, user_name) is None:
            return None
        return message


def delete_message(engine: Engine, message_id: str, user_name: str) -> bool:
    """Delete one message of an owned session; False if missing or not the user's."""
    with Session(engine) as db:
        message = db.get(ChatMessage, message_id)
        if message is None or _owned(db, message.session_id, user_name) is None:
            return False
        db.delete(message)
        db.commit()
        return True


def list_runs(engine: Engine, session_id: str, limit: int = 50) -> Sequence[ExecutionRun]:
    """The session's latest runs, newest first (ownership is the caller's check)."""
    with Session(engine) as db:
        statement = (
            select(ExecutionRun)
            .where(ExecutionRun.session_id == session_id)
            .order_by(col(ExecutionRun.started_at).desc())
            .limit(limit)
        )
        return db.exec(statement).all()


def messages_and_runs(engine: Engine, session_id: str) -> tuple[list[ChatMessage], dict[str, ExecutionRun]]:
    """A session's messages in order and the runs that wrote them (``run id -> run``), read together.

    The runs give each answer its stored duration (and a failed one its reason), so the chat page
    and ``GET /api/chat/history`` show the same figures (ownership is the caller's check).
    """
    rows = list(list_messages(engine, session_id))
    runs = {run.id: run for run in list_runs(engine, session_id, limit=len(rows) + 10)}
    return rows, runs


def last_assistant_usage(engine: Engine, session_id: str) -> dict[str, Any]:
    """The ``usage`` dict of the session's newest assistant message that has one, else ``{}``."""
    with Session(engine) as db:
        statement = (
            select(ChatMessage)
            .where(ChatMessage.session_id == session_id)
            .where(ChatMessage.role == "assistant")
            .order_by(col(ChatMessage.created_at).desc())
            .limit(20)
        )
        for message in db.exec(statement):
            if message.usage:
                return dict(message.usage)
        return {}
