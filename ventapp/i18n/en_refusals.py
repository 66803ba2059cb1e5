"""English sentences of the API's fixed refusals (``refusal.*``, :mod:`ventapp.agent.refusals`).

They are also the refusals' ``detail`` (which never changes language), so each reads exactly as the
API has always answered. Ids and placeholders match :mod:`ventapp.i18n.zh_cn_refusals`.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "refusal.empty_message": "The message is empty. Type something to send.",
    "refusal.message_too_long": "The message is longer than {limit} characters.",
    "refusal.user_name.blank": "user_name must not be blank: enter a name.",
    "refusal.user_name.invisible": "user_name must not contain control or invisible (zero-width) characters.",
    "refusal.user_name.too_long": "user_name must be at most {limit} characters.",
    "refusal.user_name.unsafe": "user_name may hold only letters, digits, spaces and {punctuation} (not {character}).",
    "refusal.user_name.no_letter": "user_name must hold at least one letter or digit.",
    "refusal.user_name.differs": "user_name differs between the query and the body.",
    "refusal.request_id": "request_id must be 1–{limit} characters.",
    "refusal.mode": "mode must be 'plan' or 'full'.",
    "refusal.session_not_found": "Session not found.",
    "refusal.message_not_found": "Message not found.",
    "refusal.session_busy": "This session is already answering. Wait for it to finish or stop it.",
    "refusal.session_busy_resume": "This session is already running. Wait for it to finish.",
    "refusal.session_busy_change": "This session is answering right now. Stop it or wait, then retry.",
    "refusal.gate_full_server": "The server is already running the maximum number of answers ({limit}). Try again shortly.",
    "refusal.gate_full_user": "You are already running the maximum number of answers ({limit}). Try again shortly.",
    "refusal.duplicate_request": "This request_id was already submitted; it is not run again. Use a new request_id for a new message.",
    "refusal.no_turn": "That message is no longer in this conversation.",
    "refusal.no_interrupt": "Nothing is waiting for an answer in this session.",
    "refusal.stale_interrupt": "This approval is out of date or was already answered. Reload to see the current one.",
    "refusal.gone": "The frames after that number are no longer kept; read the session's history instead. (oldest kept: {first_seq})",
    "refusal.starting": "The server is starting; retry shortly.",
    "refusal.json_body": "POST /api/chat takes multipart/form-data fields (message, session_id, …), not JSON.",
    "refusal.several_files": "Send one file per message (this request holds several).",
    "refusal.file_without_name": "The file part has no file name; send it as a file upload.",
    "refusal.fork_turn_empty": "fork_turn is empty: send the 0-based position of a user message, or leave the field out.",
    "refusal.fork_needs_session": "fork_turn names a message of a conversation: send it with that conversation's session_id.",
    "refusal.prefix_conflict": "The #session: prefix and session_id name different sessions.",
    "refusal.title_length": "title must be 1–{limit} characters.",
}
