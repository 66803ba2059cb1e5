"""Storage of sessions, messages and execution runs. Access only: no business rules here.

Every function is synchronous and opens one short transaction; async callers run
them through ``asyncio.to_thread`` so a slow query never blocks the event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def open_turn(
    engine: Engine,
    *,
    session_id: str,
    run_id: str,
    user_name: str,
    trace_id: str,
    kind: str,
    message: str,
    new_session: tuple[str, str, str | None] | None,
    set_route: tuple[str | None] | None = None,
    attachments: Sequence[str] = (),
) -> None:
    """Start a chat turn in one transaction: the session, the user's message, the ``running`` run.

    One commit instead of three (each an fsync on SQLite: most of a turn's time before its
    first token, issue 18). Either all of it is written or none of it.

    Args:
        engine: The relational store.
        session_id: The session (created when ``new_session`` is given).
        run_id: The new ``execution_runs`` row's id.
        user_name: The owner.
        trace_id: Correlates logs and frames.
        kind: ``execution_runs.kind`` (``chat`` or ``schedule``).
        message: The user's message as typed.
        new_session: ``(title, mode, route)`` of a session to create; None for an existing
            session, whose ``waiting_input`` runs are then closed (see :func:`abandon_waiting_runs`).
        set_route: ``(route,)`` to store on an existing session (a turn asked for another model;
            None inside means the main route); None leaves the session's route alone.
        attachments: The files the message carries (``/workspace/uploads/<name>``), kept with it
            so its chips outlive compaction of the graph state.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The write failed; nothing was committed.
    """
    with Session(engine) as db:
        if new_session is not None:
            title, mode, route = new_session
            db.add(ChatSession(id=session_id, user_name=user_name, title=title, mode=mode, route=route))
            db.flush()
        else:
            if set_route is not None:
                row = db.get(ChatSession, session_id)
                if row is not None:
                    row.route = set_route[0]
                    db.add(row)
            _abandon_waiting(db, session_id)
        _new_message(
            db,
            session_id,
            "user",
            message,
            tool_calls=[],
            citations=[],
            usage={},
            attachments=list(attachments),
            status="complete",
        )
        db.add(
            ExecutionRun(id=run_id, session_id=session_id, user_name=user_name, trace_id=trace_id, kind=kind)
        )
        db.commit()


def save_run_answer(
    engine: Engine,
    session_id: str,
    run_id: str,
    content: str,
    *,
    tool_calls: list[dict[str, Any]],
    citations: list[dict[str, Any]],
    usage: dict[str, Any],
    status: str,
) -> ChatMessage:
    """Save a run's answer; a run resumed after an interrupt extends its earlier message.

    Text is appended, tool cards merge by ``tool_call_id`` (a result fills the card the
    paused run announced), citations merge by URL, token counts add up.
    """
    with Session(engine, expire_on_commit=False) as db:
        row = _save_answer(
            db,
            session_id,
            run_id,
            content,
            tool_calls=tool_calls,
            citations=citations,
            usage=usage,
            status=status,
        )
        db.commit()
        return row


USAGE_TOTALS = ("input_tokens", "output_tokens", "total_tokens", "model_calls", "cost_micros")
"""Usage keys that add up when a resumed run extends its answer."""


def _save_answer(
    db: Session,
    session_id: str,
    run_id: str,
    content: str,
    *,
    tool_calls: list[dict[str, Any]],
    citations: list[dict[str, Any]],
    usage: dict[str, Any],
    status: str,
    at: datetime | None = None,
) -> ChatMessage:
    row = db.exec(
        select(ChatMessage).where(ChatMessage.run_id == run_id, ChatMessage.role == "assistant")
    ).first()
    if row is None:
        return _new_message(
            db,
            session_id,
            "assistant",
            content,
            run_id=run_id,
            tool_calls=tool_calls,
            citations=citations,
            usage=usage,
            status=status,
            at=at,
        )
    cards = {card["tool_call_id"]: dict(card) for card in row.tool_calls}
    for card in tool_calls:
        merged = cards.setdefault(card["tool_call_id"], {})
        merged.update(
            {key: value for key, value in card.items() if value not in (None, {}) or key not in merged}
        )
    by_url = {item["url"]: item for item in [*row.citations, *citations]}
    totals = {key: row.usage.get(key, 0) + usage.get(key, 0) for key in USAGE_TOTALS}
    row.content = "\n\n".join(part for part in (row.content, content) if part)
    row.tool_calls = list(cards.values())
    row.citations = list(by_url.values())
    row.usage = {**row.usage, **usage, **totals}
    row.status = status
    db.add(row)
    return row


def abandon_waiting_runs(engine: Engine, session_id: str) -> int:
    """A new message instead of an answer: close the session's ``waiting_input`` runs.

    Their runs become ``cancelled`` and their saved answers lose the ``waiting`` status,
    so nothing stays pending forever. Returns how many runs were closed.
    """
    with Session(engine) as db:
        closed = _abandon_waiting(db, session_id)
        db.commit()
        return closed


def _abandon_waiting(db: Session, session_id: str) -> int:
    runs = db.exec(
        select(ExecutionRun).where(
            ExecutionRun.session_id == session_id, ExecutionRun.status == "waiting_input"
        )
    ).all()
    for run in runs:
        run.status, run.error_code = "cancelled", "superseded"
        run.error = "A new message was sent instead of answering the pending question or approval."
        run.finished_at = utcnow()
        db.add(run)
        for message in db.exec(
            select(ChatMessage).where(ChatMessage.run_id == run.id, ChatMessage.status == "waiting")
        ).all():
            message.status = "cancelled"
            db.add(message)
    return len(runs)


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


def reopen_waiting_run(engine: Engine, session_id: str) -> str | None:
    """Set the session's newest ``waiting_input`` run back to ``running``; its id, or None."""
    with Session(engine) as db:
        run = db.exec(
            select(ExecutionRun)
            .where(ExecutionRun.session_id == session_id, ExecutionRun.status == "waiting_input")
            .order_by(col(ExecutionRun.started_at).desc())
        ).first()
        if run is None:
            return None
        run.status = "running"
        db.add(run)
        db.commit()
        return run.id


def finalise_run(
    engine: Engine,
    run_id: str,
    status: str,
    *,
    answer: dict[str, Any] | None = None,
    error: str | None = None,
    error_code: str | None = None,
    input_tokens: int = 0,
    output_tokens: int = 0,
    first_token_ms: int | None = None,
    finished_at: datetime | None = None,
) -> bool:
    """Save a run's answer and set its final status, error and timings in one transaction.

    Only a run still ``running`` is finalised, so writing the same finalisation again (a
    write-back from the spool after a crash, a retry) changes nothing the second time.

    Args:
        engine: The relational store.
        run_id: The run.
        status: ``success``, ``failed``, ``cancelled`` or ``waiting_input``.
        answer: ``{session_id, content, tool_calls, citations, usage, status}`` for
            :func:`save_run_answer`, or None when the run produced nothing to keep.
        error: A sentence for people, when it failed.
        error_code: The failure's code.
        input_tokens: Tokens to add to the run's totals (a resumed run finishes twice).
        output_tokens: Likewise.
        first_token_ms: Time to the first token, kept from the first part of a resumed run.
        finished_at: When the run ended (naive UTC; default now). A write-back passes the
            original time, so durations and the order of messages stay as they happened.

    Returns:
        True when this call finalised the run; False when it was not ``running`` (already
        finalised) or does not exist.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The write failed; nothing was committed.
    """
    with Session(engine, expire_on_commit=False) as db:
        run = db.get(ExecutionRun, run_id)
        if run is None or run.status != "running":
            return False
        if answer is not None:
            _save_answer(
                db,
                answer["session_id"],
                run_id,
                answer["content"],
                tool_calls=answer["tool_calls"],
                citations=answer["citations"],
                usage=answer["usage"],
                status=answer["status"],
                at=finished_at,
            )
        now = finished_at or utcnow()
        run.status = status
        run.error = error
        run.error_code = error_code
        # Added, not set: a run resumed after an approval finishes a second time.
        run.input_tokens += input_tokens
        run.output_tokens += output_tokens
        run.first_token_ms = run.first_token_ms if run.first_token_ms is not None else first_token_ms
        run.finished_at = now
        run.duration_ms = max(0, int((now - run.started_at).total_seconds() * 1000))
        run.partial = None
        db.add(run)
        db.commit()
        return True


def save_partial(engine: Engine, run_id: str, partial: dict[str, Any]) -> None:
    """Keep the answer so far on a ``running`` run (``{content, tool_calls, citations, usage}``).

    After a crash, :func:`mark_running_interrupted` turns it into the interrupted run's message.
    """
    save_partials(engine, {run_id: partial})


def save_partials(engine: Engine, partials: dict[str, dict[str, Any]]) -> None:
    """:func:`save_partial` for several runs in one transaction (``run_id -> partial``).

    Runs no longer ``running`` are left as they are (their final save came first).
    """
    with Session(engine) as db:
        for run_id, partial in partials.items():
            db.exec(
                sa.update(ExecutionRun)
                .where(col(ExecutionRun.id) == run_id, col(ExecutionRun.status) == "running")
                .values(partial=partial)
            )
        db.commit()


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
