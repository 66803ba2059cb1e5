"""Message prefixes (spec 002): ``#skill:<name>`` picks a skill, ``#session:<uuid>`` continues a session.

Prefixes are read only at the start of the message, in any order, separated by
blanks; the rest of the message is the text the user said.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ventapp.agent.pipeline import ChatRequest
from ventapp.agent.refusals import rejected, session_not_found
from ventapp.agent.workspace import SKILLS_DIR, canonical_session_id

_PREFIX = re.compile(r"#(skill|session):(\S*)(?:\s+|$)", re.IGNORECASE)


def parse_prefixes(message: str) -> tuple[str, str | None, str | None]:
    """Split leading ``#skill:`` / ``#session:`` prefixes off a message.

    Args:
        message: The message as typed, e.g. ``"#skill:ventilation-calc size a fan"``.

    Returns:
        ``(text, skill, session_id)``: the message without its prefixes (stripped), and
        the values named, or None for a prefix that is absent. A prefix given with no
        value yields ``""`` (which no skill or session matches). When a prefix repeats,
        the first one counts. Values are not validated here.
    """
    text = message.lstrip()
    found: dict[str, str] = {}
    while match := _PREFIX.match(text):
        found.setdefault(match.group(1).lower(), match.group(2))
        text = text[match.end() :]
    return text.strip(), found.get("skill"), found.get("session")


def known_skills(skills_dir: Path = SKILLS_DIR) -> list[str]:
    """Names of the installed skills: folders under ``skills_dir`` that hold a ``SKILL.md``, sorted."""
    if not skills_dir.is_dir():
        return []
    return sorted(child.name for child in skills_dir.iterdir() if (child / "SKILL.md").is_file())


def apply_prefixes(request: ChatRequest, skills_dir: Path = SKILLS_DIR) -> ChatRequest:
    """The request with its message's prefixes applied (both clients call this before admission).

    ``#skill:<name>`` sets ``skill`` and must name an installed skill; ``#session:<uuid>``
    sets ``session_id`` (ownership is checked by admission as for any session id).

    Raises:
        ChatRejected: 400 ``unknown_skill`` (nothing runs; the message lists the installed
            skills), 400 when ``#session:`` and ``session_id`` name different sessions,
            404 for ``#session:`` without an id.
    """
    text, skill, prefixed = parse_prefixes(request.message)
    if skill is not None and skill not in (installed := known_skills(skills_dir)):
        listed = tuple(installed) or "—"  # listed as the refusal's language lists names
        if not skill:  # "#skill:" alone: say what goes after it rather than quote an empty name
            raise rejected(400, "unknown_skill", "refusal.skill_unnamed", listed=listed)
        raise rejected(400, "unknown_skill", "refusal.unknown_skill", skill=skill, listed=listed)
    session_id = request.session_id
    if prefixed is not None:
        if not prefixed:
            raise session_not_found()
        if session_id and canonical_session_id(session_id) != canonical_session_id(prefixed):
            raise rejected(400, "bad_request", "refusal.prefix_conflict")
        session_id = prefixed
    return dataclasses.replace(
        request,
        message=text,
        skill=skill or request.skill,
        session_id=session_id,
        # A session named by the prefix must exist: only an id we chose ourselves may be new.
        new_session=request.new_session and session_id == request.session_id,
    )
