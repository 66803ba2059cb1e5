"""Request keys: a client's ``request_id`` remembered per user, so a repeated submit runs once.

Synchronous, one short transaction each; async callers use ``asyncio.to_thread``.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from ventapp.db.models import RequestKey, utcnow


def find_request_key(engine: Engine, user_name: str, request_id: str) -> RequestKey | None:
    """The unexpired record of ``request_id`` for this user, or None."""
    with Session(engine) as db:
        row = db.exec(
            select(RequestKey).where(RequestKey.user_name == user_name, RequestKey.request_id == request_id)
        ).first()
        return row if row is not None and row.expires_at > utcnow() else None


def claim_request_key(
    engine: Engine, user_name: str, request_id: str, session_id: str, run_id: str, ttl_s: int
) -> RequestKey | None:
    """Record ``request_id`` for this run, atomically.

    Returns:
        None when claimed; the earlier, still valid record when the key is taken (the
        unique constraint decides races between two concurrent requests).
    """
    now = utcnow()
    with Session(engine) as db:
        stale = db.exec(
            select(RequestKey).where(RequestKey.user_name == user_name, RequestKey.request_id == request_id)
        ).first()
        if stale is not None:
            if stale.expires_at > now:
                return stale
            db.delete(stale)
            db.flush()
        db.add(
            RequestKey(
                user_name=user_name,
                request_id=request_id,
                session_id=session_id,
                run_id=run_id,
                created_at=now,
                expires_at=now + timedelta(seconds=ttl_s),
            )
        )
        try:
            db.commit()
        except IntegrityError:
            db.rollback()
            return find_request_key(engine, user_name, request_id)
        return None


def purge_request_keys(engine: Engine) -> int:
    """Delete expired request keys; returns how many."""
    with Session(engine) as db:
        rows = db.exec(select(RequestKey).where(RequestKey.expires_at <= utcnow())).all()
        for row in rows:
            db.delete(row)
        db.commit()
        return len(rows)
