"""Deleting a session everywhere it lives: shared by the API and the UI (one rule, one place).

A session lives in three places: its graph state (checkpointer, thread_id = session id),
its workspace folder, and its rows. They are removed in that order, under the session
lock, so that a failure part-way never leaves graph state or files without an owner
row — a later ``start_chat`` with the same id could otherwise inherit them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ventapp.agent.admission_checks import owned_session
from ventapp.agent.pipeline import ChatRejected
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.workspace import delete_session_files
from ventapp.db import session_store


class SessionBusy(Exception):
    """The session is answering right now; stop the run (or wait) and retry."""


async def delete_session(runtime: AgentRuntime, session_id: str, user_name: str) -> bool:
    """Delete one of ``user_name``'s sessions: graph state, workspace files, messages and runs.

    Args:
        runtime: The process runtime (engine, checkpointer, settings, session locks).
        session_id: The session to delete (any UUID spelling).
        user_name: The caller; another user's session counts as missing.

    Returns:
        True when it was deleted; False when it does not exist or is not the user's
        (nothing changed).

    Raises:
        SessionBusy: A run of this session is active (nothing changed).
        OSError: The workspace folder could not be removed (graph state is already gone;
            the rows stay, so the delete can be retried).
    """
    try:
        canonical = (await owned_session(runtime, session_id, user_name)).id
    except ChatRejected:
        return False
    lock = runtime.session_lock(canonical)
    if lock.locked():
        raise SessionBusy(canonical)
    async with lock:  # no run can start in this session while it is being deleted
        claim = await runtime.coordination.claim_session(canonical)  # nor in another process
        if claim is None:
            raise SessionBusy(canonical)
        try:
            await runtime.checkpointer.adelete_thread(canonical)
            await asyncio.to_thread(
                delete_session_files, runtime.settings.workspaces_dir, user_name, canonical
            )
            return await asyncio.to_thread(session_store.delete_session, runtime.engine, canonical, user_name)
        finally:
            claim.release()


async def latest_compaction(runtime: AgentRuntime, session_id: str) -> list[dict[str, Any]]:
    """The session's most recent compaction, read from graph state (deepagents keeps only the last).

    Returns:
        ``[]`` before any compaction, else one ``{cutoff_index, file_path, summary}`` — the
        archive's virtual path comes from the state, not from the thread id (DESIGN.md).
    """
    snapshot = await runtime.agent.aget_state({"configurable": {"thread_id": session_id}})
    event = (snapshot.values or {}).get("_summarization_event")
    if not isinstance(event, dict):
        return []
    summary = getattr(event.get("summary_message"), "content", "")
    return [
        {
            "cutoff_index": event.get("cutoff_index"),
            "file_path": event.get("file_path"),
            "summary": summary if isinstance(summary, str) else str(summary),
        }
    ]
