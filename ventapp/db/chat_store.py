"""Storage of sessions, messages and execution runs. Access only: no business rules here.

Every function is synchronous and opens one short transaction; async callers run
them through ``asyncio.to_thread`` so a slow query never blocks the event loop.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from ventapp.db.billing_models import UsageLedger
from ventapp.db.models import ChatMessage, ChatSession, ExecutionRun, utcnow


def get_session(engine: Engine, session_id: str) -> ChatSession | None:
    """The session with this id, whoever owns it, or None."""
    with Session(engine) as db:
        return db.get(ChatSession, session_id)


def create_session(
    engine: Engine, session_id: str, user_name: str, title: str, mode: str, route: str | None = None
) -> ChatSession:
    """Insert a new session and return it. ``title`` must already be 1–200 characters."""
    with Session(engine, expire_on_commit=False) as db:
        row = ChatSession(id=session_id, user_name=user_name, title=title, mode=mode, route=route)
        db.add(row)
        db.commit()
        return row


def list_sessions(engine: Engine, user_name: str, limit: int = 200) -> Sequence[ChatSession]:
    """The user's sessions, pinned first, then most recently updated."""
    with Session(engine) as db:
        query = (
            select(ChatSession)
            .where(ChatSession.user_name == user_name)
            .order_by(col(ChatSession.pinned).desc(), col(ChatSession.updated_at).desc())
            .limit(limit)
        )
        return db.exec(query).all()


def add_message(
    engine: Engine,
    session_id: str,
    role: str,
    content: str,
    *,
    run_id: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    citations: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
    status: str = "complete",
) -> ChatMessage:
    """Append a message and touch the session's ``updated_at``.

    The timestamp is forced to be later than the session's newest message so that
    order by ``created_at`` is always the order of writing (pitfall 8).
    """
    with Session(engine, expire_on_commit=False) as db:
        row = _new_message(
            db,
            session_id,
            role,
            content,
            run_id=run_id,
            tool_calls=tool_calls or [],
            citations=citations or [],
            usage=usage or {},
            status=status,
        )
        db.commit()
        return row


def _new_message(
    db: Session, session_id: str, role: str, content: str, at: datetime | None = None, **fields: Any
) -> ChatMessage:
    # ``at``: a write-back of an answer parked while the database was down keeps its own time,
    # so it sorts before messages written since; otherwise the newest message sets the floor.
    now = at or utcnow()
    newest = db.exec(
        select(ChatMessage.created_at)
        .where(ChatMessage.session_id == session_id)
        .order_by(col(ChatMessage.created_at).desc())
        .limit(1)
    ).first()
    if at is None and newest is not None and now <= newest:
        now = newest + timedelta(microseconds=1)
    row = ChatMessage(session_id=session_id, role=role, content=content, created_at=now, **fields)
    db.add(row)
    session = db.get(ChatSession, session_id)
    if session is not None and (at is None or session.updated_at < now):
        session.updated_at = now
        db.add(session)
    return row


def list_messages(engine: Engine, session_id: str) -> Sequence[ChatMessage]:
    """The session's messages in the order they were written (``created_at``, microseconds)."""
    with Session(engine) as db:
        query = (
            select(ChatMessage)
            .where(ChatMessage.session_id == session_id)
            .order_by(col(ChatMessage.created_at), col(ChatMessage.id))
        )
        return db.exec(query).all()


def start_run(engine: Engine, run_id: str, session_id: str, user_name: str, trace_id: str, kind: str) -> None:
    """Record a run as ``running``."""
    with Session(engine) as db:
        db.add(
            ExecutionRun(id=run_id, session_id=session_id, user_name=user_name, trace_id=trace_id, kind=kind)
        )
        db.commit()


def run_answer(engine: Engine, run_id: str) -> ChatMessage | None:
    """The answer saved for a run so far (a paused run's partial answer), or None."""
    with Session(engine, expire_on_commit=False) as db:
        return db.exec(
            select(ChatMessage).where(ChatMessage.run_id == run_id, ChatMessage.role == "assistant")
        ).first()


def waiting_answer(engine: Engine, session_id: str) -> ChatMessage | None:
    """The newest answer of the session that waits for a person (status ``waiting``), or None."""
    with Session(engine, expire_on_commit=False) as db:
        return db.exec(
            select(ChatMessage)
            .where(
                ChatMessage.session_id == session_id,
                ChatMessage.role == "assistant",
                ChatMessage.status == "waiting",
            )
            .order_by(col(ChatMessage.created_at).desc())
        ).first()


_MESSAGES, _RUNS = ChatMessage.__table__, ExecutionRun.__table__
# Built once with a bound parameter (as in turn_writes): the check runs before every message sent
# from a tab showing no card, so it is one indexed Core select, no ORM objects.
_SESSION_WAITS = sa.select(
    sa.or_(
        sa.exists().where(
            _MESSAGES.c.session_id == sa.bindparam("p_session"),
            _MESSAGES.c.role == "assistant",
            _MESSAGES.c.status == "waiting",
        ),
        sa.exists().where(_RUNS.c.session_id == sa.bindparam("p_session"), _RUNS.c.status == "waiting_input"),
    )
)


# A parked pause: its run's end waits in the spool, so the row still reads ``running``.
_PARKED_WAITS = sa.select(
    sa.exists().where(
        _RUNS.c.session_id == sa.bindparam("p_session"),
        _RUNS.c.id.in_(sa.bindparam("p_runs", expanding=True)),
    )
)


def session_waits(engine: Engine, session_id: str, parked_pauses: Collection[str] = ()) -> bool:
    """Whether the session may wait on a person: a stored ``waiting`` answer, or a ``waiting_input`` run.

    The cheap check before the graph's checkpoint is read for the pending interrupt
    (:func:`ventapp.agent.resume.pending_interrupt`): a run that paused ends as a ``waiting_input``
    run (with its answer so far, when there is one), so False means nothing waits. A pause whose
    end the database refused is parked in the spool until it is written back; its run reads
    ``running`` meanwhile, so the caller names such runs in ``parked_pauses``. Ownership is not
    checked here.

    Args:
        engine: The relational store.
        session_id: Any session id (an unknown one is False).
        parked_pauses: Run ids whose ``waiting_input`` end is parked in the spool (almost always
            empty: then the check is the one prepared select).
    """
    with engine.connect() as connection:
        if connection.execute(_SESSION_WAITS, {"p_session": session_id}).scalar():
            return True
        if not parked_pauses:
            return False
        params = {"p_session": session_id, "p_runs": list(parked_pauses)}
        return bool(connection.execute(_PARKED_WAITS, params).scalar())


_IN_SESSION = sa.bindparam("p_session")
# What a tab remembers of the transcript it shows: every turn written (a message added, a fork's
# rewrite: count and newest), and every run that ended or ended again (a resumed answer is updated
# in place, its run finalised anew). One indexed Core select, run once per message a tab sends.
_SESSION_MARK = sa.select(
    sa.select(sa.func.count()).where(_MESSAGES.c.session_id == _IN_SESSION).scalar_subquery(),
    sa.select(sa.func.max(_MESSAGES.c.created_at))
    .where(_MESSAGES.c.session_id == _IN_SESSION)
    .scalar_subquery(),
    sa.select(sa.func.max(_RUNS.c.finished_at)).where(_RUNS.c.session_id == _IN_SESSION).scalar_subquery(),
)


def session_mark(engine: Engine, session_id: str) -> str:
    """A short string that changes whenever the session's stored transcript may have changed.

    It covers a message written (a turn admitted, an answer saved), messages replaced (an edit or
    regenerate forks the session) and a run finalised (a resumed answer is updated in place).
    Equal marks mean a tab showing the transcript read at the first still shows the stored one.
    Ownership is not checked here.

    Args:
        engine: The relational store.
        session_id: Any session id (an unknown one has the mark of an empty session).
    """
    with engine.connect() as connection:
        row = connection.execute(_SESSION_MARK, {"p_session": session_id}).one()
    return "|".join(str(value) for value in row)


def reopen_waiting_run(engine: Engine, session_id: str) -> tuple[str, int] | None:
    """Set the session's newest ``waiting_input`` run back to ``running``, resumed now.

    Its ``duration_ms`` keeps what its paused parts took; the final save adds the time since
    ``resumed_at`` (:func:`ventapp.db.turn_writes.working_ms`).

    Returns:
        ``(run id, last_seq)``: the ``seq`` its paused part ended at as kept with the run (0 when
        not kept), for its resumed part's numbering; None when nothing waits.
    """
    with Session(engine) as db:
        run = db.exec(
            select(ExecutionRun)
            .where(ExecutionRun.session_id == session_id, ExecutionRun.status == "waiting_input")
            .order_by(col(ExecutionRun.started_at).desc())
        ).first()
        if run is None:
            return None
        reopened = (run.id, run.last_seq or 0)
        run.status = "running"
        run.resumed_at = utcnow()  # its working time goes on from here (the wait is not counted)
        db.add(run)
        db.commit()
        return reopened


def keep_last_seq(engine: Engine, run_id: str, seq: int) -> None:
    """Record the last frame number of a run that paused (see ``ExecutionRun.last_seq``)."""
    with engine.begin() as connection:
        connection.execute(sa.update(_RUNS).where(_RUNS.c.id == run_id).values(last_seq=seq))


def get_run(engine: Engine, run_id: str) -> ExecutionRun | None:
    """One run by id, or None."""
    with Session(engine) as db:
        return db.get(ExecutionRun, run_id)


def _ledger_usage(db: Session, run_id: str) -> dict[str, Any]:
    rows = db.exec(select(UsageLedger).where(UsageLedger.run_id == run_id)).all()
    usage: dict[str, Any] = {
        "input_tokens": sum(row.input_tokens for row in rows),
        "output_tokens": sum(row.output_tokens for row in rows),
        "model_calls": len(rows),
        "cost_micros": sum(row.cost_micros for row in rows),
    }
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    if rows:
        usage["usage_source"] = "estimate" if any(row.source == "estimate" for row in rows) else "provider"
        usage["currency"] = next((row.currency for row in rows if row.currency), None)
    return usage
