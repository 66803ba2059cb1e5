"""Rewriting a session's stored history from a turn on (edit a sent message, regenerate an answer).

Kept apart from :mod:`ventapp.db.chat_store`, which only ever appends: this is the one place
that deletes messages of a live session, and only together with a fork of its graph state
(:mod:`ventapp.agent.fork`).
"""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from ventapp.db.models import ChatMessage, ExecutionRun


def truncate_at_turn(engine: Engine, session_id: str, turn: int) -> tuple[ChatMessage, set[str]] | None:
    """Delete the session's ``turn``-th user message (0-based) and everything written after it.

    Args:
        engine: The database.
        session_id: The session.
        turn: Which user message, counting the session's user messages from 0.

    Returns:
        ``(the deleted user message, ids of the runs that started with it or later)``, or None when
        the session has no such turn (then nothing is deleted). The runs' rows stay (usage, billing).
    """
    with Session(engine, expire_on_commit=False) as db:
        rows = db.exec(
            select(ChatMessage)
            .where(ChatMessage.session_id == session_id)
            .order_by(col(ChatMessage.created_at), col(ChatMessage.id))
        ).all()
        users = [row for row in rows if row.role == "user"]
        if turn < 0 or turn >= len(users):
            return None
        first = users[turn]
        doomed = rows[rows.index(first) :]
        later = db.exec(
            select(ExecutionRun.id).where(
                ExecutionRun.session_id == session_id, col(ExecutionRun.started_at) >= first.created_at
            )
        ).all()
        runs = {str(run_id) for run_id in later} | {row.run_id for row in doomed if row.run_id}
        for row in doomed:
            db.delete(row)
        db.commit()
        return first, runs
