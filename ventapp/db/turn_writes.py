"""A chat turn's own writes: admission, partial saves and the final save (issue 18).

Split from :mod:`ventapp.db.chat_store` along the turn's hot path. These run on every turn, in
worker threads that hold the GIL against the event loop streaming tokens, so they are Core
statements on one connection: no ORM unit of work, identity map or per-row objects, about
1-2 ms less CPU per call than the same writes through a ``Session``
(``bench/bench_store_cpu.py``). The tables stay owned by the SQLModel models and Alembic; the
rows written are the ones the ORM wrote. Access only, like the store; every function is one
transaction and blocking (async callers use ``asyncio.to_thread``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ventapp.db.models import ChatMessage, ChatSession, ExecutionRun, new_id, utcnow
from ventapp.text_rules import storable

_SESSIONS = ChatSession.__table__
_MESSAGES = ChatMessage.__table__
_RUNS = ExecutionRun.__table__

# Statements built once with bound parameters (named ``p_*``, apart from the columns): building
# a statement per call costs as much CPU as running it; the compiled cache does the rest.
_INSERT_SESSION = sa.insert(_SESSIONS)
_INSERT_MESSAGE = sa.insert(_MESSAGES)
_INSERT_RUN = sa.insert(_RUNS)
_SESSION_BY_ID = _SESSIONS.c.id == sa.bindparam("p_session")
_SET_ROUTE = sa.update(_SESSIONS).where(_SESSION_BY_ID).values(route=sa.bindparam("p_route"))
_TOUCH_SESSION = sa.update(_SESSIONS).where(_SESSION_BY_ID).values(updated_at=sa.bindparam("p_at"))
_TOUCH_SESSION_IF_OLDER = (
    sa.update(_SESSIONS)
    .where(_SESSION_BY_ID, _SESSIONS.c.updated_at < sa.bindparam("p_at"))
    .values(updated_at=sa.bindparam("p_at"))
)
_NEWEST_MESSAGE = (
    sa.select(_MESSAGES.c.created_at)
    .where(_MESSAGES.c.session_id == sa.bindparam("p_session"))
    .order_by(_MESSAGES.c.created_at.desc())
    .limit(1)
)
_RUN_ANSWER = sa.select(
    _MESSAGES.c.id,
    _MESSAGES.c.content,
    _MESSAGES.c.reasoning,
    _MESSAGES.c.tool_calls,
    _MESSAGES.c.citations,
    _MESSAGES.c.usage,
).where(_MESSAGES.c.run_id == sa.bindparam("p_run"), _MESSAGES.c.role == "assistant")
_UPDATE_ANSWER = sa.update(_MESSAGES).where(_MESSAGES.c.id == sa.bindparam("p_message"))
_RUN_STATE = sa.select(
    _RUNS.c.status, _RUNS.c.started_at, _RUNS.c.resumed_at, _RUNS.c.duration_ms, _RUNS.c.first_token_ms
).where(_RUNS.c.id == sa.bindparam("p_run"))
_FINISH_RUN = (
    sa.update(_RUNS)
    .where(_RUNS.c.id == sa.bindparam("p_run"))
    .values(
        # Added, not set: a run resumed after an approval finishes a second time.
        input_tokens=_RUNS.c.input_tokens + sa.bindparam("p_input", type_=sa.Integer),
        output_tokens=_RUNS.c.output_tokens + sa.bindparam("p_output", type_=sa.Integer),
    )
)
_WAITING_RUNS = sa.select(_RUNS.c.id).where(
    _RUNS.c.session_id == sa.bindparam("p_session"), _RUNS.c.status == "waiting_input"
)
_SAVE_PARTIAL = (
    sa.update(_RUNS)
    .where(_RUNS.c.id == sa.bindparam("p_run"), _RUNS.c.status == "running")
    .values(partial=sa.bindparam("p_partial", type_=_RUNS.c.partial.type))
)


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
    with engine.begin() as connection:
        if new_session is not None:
            title, mode, route = new_session
            at = utcnow()
            # A session created here has no messages yet: its user's message is its newest.
            connection.execute(
                _INSERT_SESSION,
                {
                    "id": session_id,
                    "user_name": user_name,
                    "title": title,
                    "pinned": False,
                    "mode": mode,
                    "route": route,
                    "created_at": at,
                    "updated_at": at,
                },
            )
        else:
            if set_route is not None:
                connection.execute(_SET_ROUTE, {"p_session": session_id, "p_route": set_route[0]})
            _abandon_waiting(connection, session_id)
            at = _next_message_time(connection, session_id)
            connection.execute(_TOUCH_SESSION, {"p_session": session_id, "p_at": at})
        connection.execute(
            _INSERT_MESSAGE,
            _message_values(
                session_id,
                "user",
                message,
                at,
                run_id=None,
                tool_calls=[],
                citations=[],
                usage={},
                attachments=list(attachments),
                reasoning=None,
                status="complete",
            ),
        )
        connection.execute(
            _INSERT_RUN,
            {
                "id": run_id,
                "session_id": session_id,
                "user_name": user_name,
                "trace_id": trace_id,
                "kind": kind,
                "status": "running",
                "error": None,
                "error_code": None,
                "input_tokens": 0,
                "output_tokens": 0,
                "started_at": utcnow(),
                "finished_at": None,
                "duration_ms": None,
                "first_token_ms": None,
                "partial": None,
            },
        )


def _message_values(session_id: str, role: str, content: str, at: datetime, **fields: Any) -> dict[str, Any]:
    """An ``INSERT`` of a ``chat_messages`` row: every column, as the ORM would write it."""
    return {
        "id": new_id(),
        "session_id": session_id,
        "role": role,
        "content": content,
        "created_at": at,
        **fields,
    }


def _next_message_time(connection: sa.Connection, session_id: str) -> datetime:
    """Now, or just after the session's newest message when the clock has not moved past it (pitfall 8)."""
    now = utcnow()
    newest = connection.execute(_NEWEST_MESSAGE, {"p_session": session_id}).scalar()
    if newest is not None and now <= newest:
        now = newest + timedelta(microseconds=1)
    return now


USAGE_TOTALS = ("input_tokens", "output_tokens", "total_tokens", "model_calls", "cost_micros")
"""Usage keys a run's booking and its ledger rows both carry, and that add up."""
ANSWER_USAGE_SUMS = (*USAGE_TOTALS, "reasoning_tokens")
"""Usage keys that add up when a resumed run extends its answer (its ``done`` and its stored usage)."""


def merged_answer(
    row: Any,
    content: str,
    tool_calls: list[dict[str, Any]],
    citations: list[dict[str, Any]],
    usage: dict[str, Any],
    reasoning: str | None = None,
) -> dict[str, Any]:
    """A saved answer (``row``: content, reasoning, tool_calls, citations, usage) extended by a resumed part.

    Text is appended, reasoning too (a paragraph of its own), tool cards merge by ``tool_call_id``
    (a result fills the card the paused run announced), citations merge by URL, token counts add up.
    """
    cards = {card["tool_call_id"]: dict(card) for card in row.tool_calls}
    for card in tool_calls:
        merged = cards.setdefault(card["tool_call_id"], {})
        merged.update(
            {key: value for key, value in card.items() if value not in (None, {}) or key not in merged}
        )
    by_url = {item["url"]: item for item in [*row.citations, *citations]}
    totals = {key: (row.usage.get(key) or 0) + (usage.get(key) or 0) for key in ANSWER_USAGE_SUMS}
    return {
        "content": "\n\n".join(part for part in (row.content, content) if part),
        "reasoning": "\n\n".join(part for part in (row.reasoning, reasoning) if part) or None,
        "tool_calls": list(cards.values()),
        "citations": list(by_url.values()),
        "usage": {**row.usage, **usage, **totals},
    }


SUPERSEDED_CODE = "superseded"
"""``execution_runs.error_code`` of a paused run closed by a new message (:func:`abandon_waiting_runs`)."""


def abandon_waiting_runs(engine: Engine, session_id: str) -> int:
    """A new message instead of an answer: close the session's ``waiting_input`` runs.

    Their runs become ``cancelled`` and their saved answers lose the ``waiting`` status,
    so nothing stays pending forever. Returns how many runs were closed.
    """
    with engine.begin() as connection:
        return _abandon_waiting(connection, session_id)


def _abandon_waiting(connection: sa.Connection, session_id: str) -> int:
    runs = list(connection.execute(_WAITING_RUNS, {"p_session": session_id}).scalars())
    if runs:
        connection.execute(
            sa.update(_RUNS)
            .where(_RUNS.c.id.in_(runs))
            .values(
                status="cancelled",
                error_code=SUPERSEDED_CODE,
                error="A new message was sent instead of answering the pending question or approval.",
                finished_at=utcnow(),
            )
        )
        connection.execute(
            sa.update(_MESSAGES)
            .where(_MESSAGES.c.run_id.in_(runs), _MESSAGES.c.status == "waiting")
            .values(status="cancelled")
        )
    return len(runs)


@dataclass(frozen=True, slots=True)
class FinalisedRun:
    """What :func:`finalise_run` stored for a run it finalised.

    Attributes:
        duration_ms: The run's stored ``duration_ms`` (milliseconds; :func:`working_ms`): the
            figure a re-read of the session shows, so the live ``done`` frame carries this one
            rather than a clock of its own (the two rounded apart).
        content: The saved answer's text (a resumed answer's whole text, the paused part's
            included), None when the run kept no answer.
    """

    duration_ms: int
    content: str | None = None


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
    along: Callable[[sa.Connection], Any] | None = None,
) -> FinalisedRun | None:
    """Save a run's answer and set its final status, error and timings in one transaction.

    Every U+0000 in ``answer`` (text, reasoning, tool cards, citations) and ``error`` is stored as
    U+FFFD (:func:`ventapp.text_rules.storable`), on every backend.

    Only a run still ``running`` is finalised, so writing the same finalisation again (a
    write-back from the spool after a crash, a retry) changes nothing the second time.

    Args:
        engine: The relational store.
        run_id: The run.
        status: ``success``, ``failed``, ``cancelled`` or ``waiting_input``.
        answer: ``{session_id, content, tool_calls, citations, usage, status[, reasoning]}`` for
            :func:`_write_answer`, or None when the run produced nothing to keep (``reasoning``
            is missing from records parked before it was kept).
        error: A sentence for people, when it failed.
        error_code: The failure's code.
        input_tokens: Tokens to add to the run's totals (a resumed run finishes twice).
        output_tokens: Likewise.
        first_token_ms: Time to the first token, kept from the first part of a resumed run.
        finished_at: When the run ended (naive UTC; default now). A write-back passes the
            original time, so durations and the order of messages stay as they happened.
        along: Further writes for the same transaction, given its connection (the run's last
            ledger rows, issue 18: one commit instead of two); run whether or not the run was
            still ``running``.

    Returns:
        What was stored (the duration) when this call finalised the run; None when it was not
        ``running`` (already finalised) or does not exist.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: The write failed; nothing was committed.
    """
    # The model's text, tool results and error sentences are machine-made: a NUL in them must
    # not fail the save (PostgreSQL refuses it; a parked answer would retry forever), so every
    # backend stores U+FFFD. Here, because the spool's write-back comes through this too.
    answer, error = storable(answer), storable(error)
    with engine.begin() as connection:
        if along is not None:
            along(connection)
        run = connection.execute(_RUN_STATE, {"p_run": run_id}).first()
        if run is None or run.status != "running":
            return None
        content = None
        if answer is not None:
            content = _write_answer(
                connection,
                answer["session_id"],
                run_id,
                answer["content"],
                tool_calls=answer["tool_calls"],
                citations=answer["citations"],
                usage=answer["usage"],
                status=answer["status"],
                reasoning=answer.get("reasoning"),
                at=finished_at,
            )
        now = finished_at or utcnow()
        duration_ms = working_ms(run.started_at, run.resumed_at, run.duration_ms, now)
        connection.execute(
            _FINISH_RUN,
            {
                "p_run": run_id,
                "p_input": input_tokens,
                "p_output": output_tokens,
                "status": status,
                "error": error,
                "error_code": error_code,
                "first_token_ms": run.first_token_ms if run.first_token_ms is not None else first_token_ms,
                "finished_at": now,
                "duration_ms": duration_ms,
                "partial": None,
            },
        )
        return FinalisedRun(duration_ms=duration_ms, content=content)


def working_ms(
    started_at: datetime, resumed_at: datetime | None, paused_ms: int | None, now: datetime
) -> int:
    """A run's duration at ``now``: the agent's working time, without any wait for a person.

    A run that paused for an approval or an answer and was resumed counts its paused parts
    (``paused_ms``, the ``duration_ms`` stored when it paused) plus the time since it was last
    resumed; the hours an approval may wait are not the agent's.

    Args:
        started_at: When the run started (naive UTC).
        resumed_at: When it was last resumed, or None when it never paused.
        paused_ms: Its stored ``duration_ms`` (what its parts before ``resumed_at`` took).
        now: When this part ended (naive UTC).

    Returns:
        Milliseconds, at least 0.
    """
    since = started_at if resumed_at is None else resumed_at
    before = 0 if resumed_at is None else paused_ms or 0
    return before + max(0, int((now - since).total_seconds() * 1000))


def _write_answer(
    connection: sa.Connection,
    session_id: str,
    run_id: str,
    content: str,
    *,
    tool_calls: list[dict[str, Any]],
    citations: list[dict[str, Any]],
    usage: dict[str, Any],
    status: str,
    reasoning: str | None = None,
    at: datetime | None = None,
) -> str:
    """The final save's answer on ``connection``: extends the run's saved answer, or adds it.

    Returns:
        The text saved (the extended one when the run had saved an answer before).
    """
    row = connection.execute(_RUN_ANSWER, {"p_run": run_id}).first()
    if row is not None:
        merged = merged_answer(row, content, tool_calls, citations, usage, reasoning)
        connection.execute(_UPDATE_ANSWER, {"p_message": row.id, **merged, "status": status})
        return str(merged["content"])
    # ``at``: a write-back of an answer parked while the database was down keeps its own time,
    # so it sorts before messages written since; otherwise the newest message sets the floor.
    now = at or _next_message_time(connection, session_id)
    values = dict(
        run_id=run_id,
        reasoning=reasoning or None,
        tool_calls=tool_calls,
        citations=citations,
        usage=usage,
        status=status,
    )
    connection.execute(
        _INSERT_MESSAGE, _message_values(session_id, "assistant", content, now, attachments=None, **values)
    )
    touch = _TOUCH_SESSION if at is None else _TOUCH_SESSION_IF_OLDER
    connection.execute(touch, {"p_session": session_id, "p_at": now})
    return content


def save_partial(engine: Engine, run_id: str, partial: dict[str, Any]) -> None:
    """Keep the answer so far on a ``running`` run (``{content, reasoning, tool_calls, citations, usage}``).

    After a crash, :func:`mark_running_interrupted` turns it into the interrupted run's message.
    """
    save_partials(engine, {run_id: partial})


def save_partials(engine: Engine, partials: dict[str, dict[str, Any]]) -> None:
    """:func:`save_partial` for several runs in one transaction (``run_id -> partial``).

    Each is stored with ``saved_at`` (ISO naive UTC): a moment the run is known to have been
    working, which crash recovery times its answer to. Runs no longer ``running`` are left as
    they are (their final save came first).
    """
    saved_at = utcnow().isoformat()
    with engine.begin() as connection:
        for run_id, partial in partials.items():
            # storable: the answer so far is machine-made (see finalise_run); JSON holds no "\u0000".
            connection.execute(
                _SAVE_PARTIAL, {"p_run": run_id, "p_partial": storable({**partial, "saved_at": saved_at})}
            )
