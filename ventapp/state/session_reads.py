"""Reads behind the chat page: the user's sessions and one session's transcript, as views.

Also the small browser-side helpers every chat handler shares: the address-bar script and
the clean-up of attachments that were never sent. :mod:`ventapp.state.chat_state`
re-exports them (its handlers call them through its namespace).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import reflex as rx

from ventapp.agent.identity import InvalidUserName, normalize_user_name
from ventapp.agent.pipeline import ChatRejected, owned_session
from ventapp.agent.uploads import discard_upload
from ventapp.db import chat_store
from ventapp.state import turns
from ventapp.state.views import ChatMessageView, SessionView, message_from_row, session_from_row


def clean_user_name(raw: str) -> tuple[str, str]:
    """A typed user name under the API's rule (:func:`ventapp.agent.identity.normalize_user_name`).

    Returns:
        ``(name, "")`` when valid (NFC, trimmed, inner whitespace folded to single spaces),
        else ``("", sentence explaining what to fix)``; a blank name is refused here as on
        every route (the UI never falls back to ``default``).
    """
    try:
        return normalize_user_name(str(raw or "")), ""
    except InvalidUserName as exc:
        return "", exc.message


async def load_sessions(user_name: str) -> list[SessionView]:
    """The user's past sessions for the sidebar (empty before the runtime is open)."""
    runtime = turns.current_runtime()
    if runtime is None or not user_name:
        return []
    rows = await asyncio.to_thread(chat_store.list_sessions, runtime.engine, user_name)
    return [session_from_row(row) for row in rows]


async def load_session(session_id: str, user_name: str) -> tuple[list[ChatMessageView], str] | None:
    """The stored transcript and mode of one of the user's sessions; None if it is not theirs."""
    runtime = turns.current_runtime()
    if runtime is None or not session_id:
        return None
    try:
        session = await owned_session(runtime, session_id, user_name)
    except ChatRejected:
        return None
    rows = await asyncio.to_thread(chat_store.list_messages, runtime.engine, session.id)
    return [message_from_row(row) for row in rows], session.mode


def last_context(messages: list[ChatMessageView]) -> tuple[int, int]:
    """``(context_tokens, context_limit)`` of the newest answer that reported them, else ``(0, 0)``."""
    for message in reversed(messages):
        if message.context_limit:
            return message.context_tokens, message.context_limit
    return 0, 0


def session_url_script(session_id: str) -> Any:
    """Show the open session in the address bar (``/?session=<id>``; ``""`` = a new chat), no reload."""
    query = f"?session={session_id}" if session_id else ""
    return rx.call_script(
        f"window.history.replaceState(null, '', window.location.pathname + {json.dumps(query)})"
    )


async def discard_attachments(user_name: str, session_id: str, paths: list[str]) -> None:
    """Delete uploaded files that were never sent (the chat they were for was left)."""
    runtime = turns.current_runtime()
    if runtime is None or not session_id:
        return
    for path in paths:
        await asyncio.to_thread(discard_upload, runtime.settings, user_name, session_id, path)
