"""What the chat page reads and writes outside a run: sessions, transcripts, names, drafts, the URL.

Plain async helpers for :class:`~ventapp.state.chat_state.ChatState` and its sibling
:class:`~ventapp.state.sessions_state.SessionsState`; they call the stores and the agent
layer directly (never our HTTP API) and word their text in the UI language they are given.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from urllib.parse import quote

import reflex as rx

from ventapp.agent.admission_checks import owned_session
from ventapp.agent.identity import MAX_USER_NAME_CHARS, InvalidUserName, normalize_user_name
from ventapp.agent.pipeline import ChatRejected
from ventapp.agent.turn_attachments import sent_attachments
from ventapp.agent.uploads import discard_upload
from ventapp.db import chat_store, session_store
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.state import turns
from ventapp.state.views import ChatMessageView, SessionView, message_from_row, session_from_row

logger = logging.getLogger(__name__)


def clean_user_name(raw: str, lang: str = DEFAULT_LANG) -> tuple[str, str]:
    """A typed user name under the API's rule (:func:`ventapp.agent.identity.normalize_user_name`).

    Returns:
        ``(name, "")`` when valid (NFC, trimmed, inner whitespace folded to single spaces),
        else ``("", sentence in lang explaining what to fix)``; a blank name is refused here as
        on every route (the UI never falls back to ``default``).
    """
    text = str(raw or "")
    try:
        return normalize_user_name(text), ""
    except InvalidUserName as refused:
        return "", t(f"name.{refused.cause}", lang, max=MAX_USER_NAME_CHARS, character=refused.character)


async def load_sessions(user_name: str, lang: str = DEFAULT_LANG) -> list[SessionView]:
    """The user's past sessions for the sidebar (empty before the runtime is open), dated in ``lang``."""
    runtime = turns.current_runtime()
    if runtime is None or not user_name:
        return []
    rows = await asyncio.to_thread(chat_store.list_sessions, runtime.engine, user_name)
    return [session_from_row(row, lang) for row in rows]


async def load_session(
    session_id: str, user_name: str, lang: str = DEFAULT_LANG
) -> tuple[list[ChatMessageView], str] | None:
    """The stored transcript (worded in ``lang``) and mode of one of the user's sessions; None if not theirs."""
    runtime = turns.current_runtime()
    if runtime is None or not session_id:
        return None
    try:
        session = await owned_session(runtime, session_id, user_name)
    except ChatRejected:
        return None
    rows, runs = await asyncio.to_thread(session_store.messages_and_runs, runtime.engine, session.id)
    messages = [message_from_row(row, lang, runs.get(row.run_id or "")) for row in rows]
    questions = [m for m in messages if m.role == "user"]
    stored = [row.attachments for row in rows if row.role == "user"]
    for question, attachments in zip(questions, stored, strict=True):
        question.attachments = list(attachments or [])
    if any(attachments is None for attachments in stored):
        await _attachments_from_graph(runtime, session.id, questions, stored)
    return messages, session.mode


async def _attachments_from_graph(
    runtime: Any, session_id: str, questions: list[ChatMessageView], stored: list[list[str] | None]
) -> None:
    """Chips of messages stored before they kept their files (revision 0010): from the graph state,
    where compaction may have summarised them away."""
    try:
        sent = await sent_attachments(runtime.agent, session_id, [m.content for m in questions])
    except Exception:
        logger.exception("reading the attachments of session %s failed", session_id)
        return
    for question, kept, attachments in zip(questions, stored, sent, strict=False):
        if kept is None:
            question.attachments = attachments


def last_context(messages: list[ChatMessageView]) -> tuple[int, int]:
    """``(context_tokens, context_limit)`` of the newest answer that reported them, else ``(0, 0)``."""
    for message in reversed(messages):
        if message.context_limit:
            return message.context_tokens, message.context_limit
    return 0, 0


def session_url(session_id: str) -> str:
    """The chat page's address of a session (``/?session=<id>``; ``"/"`` for a new chat)."""
    return f"/?session={quote(session_id)}" if session_id else "/"


def session_url_script(session_id: str) -> Any:
    """Show the open session in the address bar (``/?session=<id>``; ``""`` = a new chat), no reload."""
    query = f"?session={session_id}" if session_id else ""
    return rx.call_script(
        f"window.history.replaceState(null, '', window.location.pathname + {json.dumps(query)})"
    )


EDIT_FORM_ID = "edit-form"
"""The open edit box's form (one at a time)."""
# The transcript (rx.auto_scroll) keeps its bottom in place while it is scrolled to its end, so the
# box, taller than the bubble it replaces, grew upwards past the top. Once the box is rendered (a
# few frames after the event) it is brought fully into view, moving the transcript as little as
# can be; the scroll event sent at once tells the auto-scroll the reader left the end.
_EDIT_INTO_VIEW = f"""(() => {{
  let frames = 0;
  const show = () => {{
    const box = document.getElementById("{EDIT_FORM_ID}");
    if (!box || frames < 2) {{ if (++frames < 60) requestAnimationFrame(show); return; }}
    box.scrollIntoView({{block: "nearest"}});
    document.getElementById("transcript")?.dispatchEvent(new Event("scroll"));
  }};
  requestAnimationFrame(show);
}})()"""


def edit_into_view() -> Any:
    """The event that scrolls the edit box, once rendered, fully into the transcript's view."""
    return rx.call_script(_EDIT_INTO_VIEW)


async def discard_attachments(user_name: str, session_id: str, paths: list[str]) -> None:
    """Delete uploaded files that were never sent (the chat they were for was left)."""
    runtime = turns.current_runtime()
    if runtime is None or not session_id:
        return
    for path in paths:
        await asyncio.to_thread(discard_upload, runtime.settings, user_name, session_id, path)
