"""Forking a conversation before one of its turns (edit a sent message and resend, regenerate).

The graph state is never rebuilt by re-sending text: the checkpointer's history is walked back
from the thread's current checkpoint, along its parents, to the newest checkpoint that no run of
the replaced turns wrote (each checkpoint's metadata carries the ``run_id`` of the run that wrote
it: ``ChatRun`` puts it in the config's ``metadata``) and that holds none of the messages those
runs added (an earlier fork's copy has no ``run_id`` but may hold them). That checkpoint is
copied to become the thread's latest (LangGraph's ``as_node="__copy__"``, a ``fork``
checkpoint), so the next run continues from the state before the turn. When the turn was the
first, the thread starts afresh. The stored transcript loses the turn and everything after it
(:mod:`ventapp.db.history_edit`); the replaced message's attachments are handed back so that
the new turn carries them again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ventapp.agent.turn_attachments import sent_attachments
from ventapp.db import chat_store
from ventapp.db.history_edit import truncate_at_turn

logger = logging.getLogger(__name__)


def _message_ids(snapshot: Any) -> set[str]:
    return {m.id for m in (snapshot.values or {}).get("messages", []) if getattr(m, "id", None)}


def _parent(snapshots: dict[str, Any], snapshot: Any) -> Any | None:
    parent = snapshot.parent_config
    return snapshots.get(parent["configurable"]["checkpoint_id"]) if parent else None


async def fork_point(graph: Any, session_id: str, replaced_runs: set[str]) -> Any | None:
    """The newest checkpoint on the thread's current branch that holds nothing of ``replaced_runs``.

    A checkpoint qualifies when none of ``replaced_runs`` wrote it and its messages include none
    that those runs added. The second test matters for checkpoints written outside a run: an
    earlier fork's copy (``source: fork``) carries no ``run_id`` yet may hold the very turn now
    being replaced (edit after regenerate), and so may a stopped run's saved state.

    Args:
        graph: The compiled agent graph (with its checkpointer).
        session_id: The thread.
        replaced_runs: Ids of the runs of the turns being replaced.

    Returns:
        That checkpoint's config, or None when every checkpoint of the branch holds part of them.
    """
    config: dict[str, Any] = {"configurable": {"thread_id": session_id}}
    snapshots = {}
    async for snapshot in graph.aget_state_history(config):
        snapshots[snapshot.config["configurable"]["checkpoint_id"]] = snapshot
    # Every message a replaced run added, on whichever branch it ran.
    added: set[str] = set()
    for snapshot in snapshots.values():
        if (snapshot.metadata or {}).get("run_id") in replaced_runs:
            parent = _parent(snapshots, snapshot)
            added |= _message_ids(snapshot) - (_message_ids(parent) if parent is not None else set())
    current = await graph.aget_state(config)
    if current is None or not getattr(current, "config", None):
        return None
    snapshot = snapshots.get(current.config["configurable"].get("checkpoint_id"))
    while snapshot is not None:
        if (snapshot.metadata or {}).get("run_id") not in replaced_runs and not (
            _message_ids(snapshot) & added
        ):
            return snapshot.config
        snapshot = _parent(snapshots, snapshot)
    return None


async def _legacy_attachments(engine: Any, graph: Any, session_id: str, message: str) -> list[str]:
    # Rows stored before ``chat_messages.attachments`` existed: the agent's copy of the turn lists
    # them (read before the fork moves the thread). Call after the turn's rows were cut.
    rows = await asyncio.to_thread(chat_store.list_messages, engine, session_id)
    questions = [row.content for row in rows if row.role == "user"] + [message]
    return (await sent_attachments(graph, session_id, questions))[-1]


async def fork_before_turn(
    engine: Any, graph: Any, session_id: str, turn: int
) -> tuple[str, list[str]] | None:
    """Replace the session's ``turn``-th user message and everything after it, in both histories.

    Call under the session lock, before the new turn's message is stored.

    Args:
        engine: The database.
        graph: The compiled agent graph the session runs on.
        session_id: The session (= thread id).
        turn: Which user message (0-based, counting the session's user messages).

    Returns:
        ``(the replaced message's text, its attachments)`` (``/workspace/uploads/<name>``: the new
        turn keeps them), or None when the session has no such turn (nothing changed).
    """
    cut = await asyncio.to_thread(truncate_at_turn, engine, session_id, turn)
    if cut is None:
        return None
    message, runs = cut
    attachments = message.attachments
    if attachments is None:
        attachments = await _legacy_attachments(engine, graph, session_id, message.content)
    point = await fork_point(graph, session_id, runs)
    if point is None:
        await graph.checkpointer.adelete_thread(session_id)
    else:
        await graph.aupdate_state(point, None, as_node="__copy__")
    logger.info("session %s forked before turn %d (%d run(s) replaced)", session_id, turn, len(runs))
    return message.content or "", list(attachments)
