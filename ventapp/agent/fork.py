"""Forking a conversation before one of its turns (edit a sent message and resend, regenerate).

The graph state is never rebuilt by re-sending text: the checkpointer's history is walked back
from the thread's current checkpoint, along its parents, to the newest checkpoint that no run of
the replaced turns wrote (each checkpoint's metadata carries the ``run_id`` of the run that wrote
it: ``ChatRun`` puts it in the config's ``metadata``). That checkpoint is copied to become the
thread's latest (LangGraph's ``as_node="__copy__"``, a ``fork`` checkpoint), so the next run
continues from the state before the turn. When the turn was the first, the thread starts afresh.
The stored transcript loses the turn and everything after it (:mod:`ventapp.db.history_edit`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ventapp.db.history_edit import truncate_at_turn

logger = logging.getLogger(__name__)


async def fork_point(graph: Any, session_id: str, replaced_runs: set[str]) -> Any | None:
    """The newest checkpoint on the thread's current branch that none of ``replaced_runs`` wrote.

    Args:
        graph: The compiled agent graph (with its checkpointer).
        session_id: The thread.
        replaced_runs: Ids of the runs of the turns being replaced.

    Returns:
        That checkpoint's config, or None when every checkpoint of the branch is theirs.
    """
    config: dict[str, Any] = {"configurable": {"thread_id": session_id}}
    snapshots = {}
    async for snapshot in graph.aget_state_history(config):
        snapshots[snapshot.config["configurable"]["checkpoint_id"]] = snapshot
    current = await graph.aget_state(config)
    while current is not None and getattr(current, "config", None):
        checkpoint_id = current.config["configurable"].get("checkpoint_id")
        snapshot = snapshots.get(checkpoint_id)
        if snapshot is None:
            return None
        if (snapshot.metadata or {}).get("run_id") not in replaced_runs:
            return snapshot.config
        parent = snapshot.parent_config
        current = snapshots.get(parent["configurable"]["checkpoint_id"]) if parent else None
    return None


async def fork_before_turn(engine: Any, graph: Any, session_id: str, turn: int) -> bool:
    """Replace the session's ``turn``-th user message and everything after it, in both histories.

    Call under the session lock, before the new turn's message is stored.

    Args:
        engine: The database.
        graph: The compiled agent graph the session runs on.
        session_id: The session (= thread id).
        turn: Which user message (0-based, counting the session's user messages).

    Returns:
        False when the session has no such turn (nothing changed).
    """
    cut = await asyncio.to_thread(truncate_at_turn, engine, session_id, turn)
    if cut is None:
        return False
    _message, runs = cut
    point = await fork_point(graph, session_id, runs)
    if point is None:
        await graph.checkpointer.adelete_thread(session_id)
    else:
        await graph.aupdate_state(point, None, as_node="__copy__")
    logger.info("session %s forked before turn %d (%d run(s) replaced)", session_id, turn, len(runs))
    return True
