"""Renaming a user across the stores (``python -m ventapp.auth rename-user OLD NEW``).

For people whose saved name the user-name rule now refuses (a ``/`` saved before the rule, say):
their conversations, runs, usage, quotas, schedules, preferences, approval rules and, with
``AUTH_MODE=local``, account, login sessions and API keys move to a name the rule accepts.

What moves, in this order:

1. checks: ``NEW`` follows the rule of every route (:func:`ventapp.identity.normalize_user_name`);
   ``OLD`` (taken exactly as stored: it may be refused by the rule) owns rows or files; ``NEW``
   owns neither (a rename never merges two people);
2. the workspace folder (``WORKSPACES_DIR/<hash(user)>``, every session's files) is renamed;
3. every row with a ``user_name`` moves in one transaction (:mod:`ventapp.db.user_rename`);
   should that fail, the folder is moved back.

Run it with the app stopped (or at least while that user has no answer running): a run that is
under way keeps the name it started with.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine

from ventapp.agent.workspace import user_dir
from ventapp.auth.service import AuthRejected, canonical
from ventapp.db import user_rename
from ventapp.identity import InvalidUserName, normalize_user_name

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Renamed:
    """What a rename moved: rows per table, and whether a workspace folder moved."""

    old: str
    new: str
    rows: dict[str, int]
    files_moved: bool


def rename_user(engine: Engine, workspaces_dir: Path, old: str, new: str) -> Renamed:
    """Move everything ``old`` owns to ``new`` (see the module docstring for the order).

    Args:
        engine: The app's database.
        workspaces_dir: ``Settings.workspaces_dir``.
        old: The name exactly as stored.
        new: The name to move to; made canonical by the rule.

    Returns:
        What moved.

    Raises:
        AuthRejected: 400 ``bad_request`` when ``new`` breaks the rule or equals ``old``; 404
            ``not_found`` when ``old`` owns nothing; 409 ``conflict`` when ``new`` already owns
            rows or files. Nothing has moved then.
        OSError: The folder could not be renamed (nothing has moved).
    """
    target = canonical(new)
    if target == old:
        raise AuthRejected(400, "bad_request", f"{old!r} and {new!r} are the same user name: nothing to do.")
    rows = user_rename.rows_of(engine, old)
    source_dir, target_dir = user_dir(workspaces_dir, old), user_dir(workspaces_dir, target)
    if not rows and not source_dir.exists():
        raise AuthRejected(
            404, "not_found", f"Nothing is stored under the name {old!r} (spelled exactly as stored?)."
        )
    taken = user_rename.rows_of(engine, target)
    if taken or target_dir.exists():
        where = ", ".join(sorted(taken)) or "its workspace folder"
        raise AuthRejected(
            409, "conflict", f"{target!r} already has data ({where}): a rename never merges two users."
        )
    files_moved = source_dir.exists()
    if files_moved:
        source_dir.rename(target_dir)
    try:
        moved = user_rename.move_rows(engine, old, target)
    except user_rename.UserNameTaken as raced:  # rows for the target appeared meanwhile
        _undo(target_dir, source_dir, files_moved)
        raise AuthRejected(
            409,
            "conflict",
            f"{target!r} already has data ({', '.join(sorted(raced.tables))}): nothing moved.",
        ) from None
    except BaseException:
        _undo(target_dir, source_dir, files_moved)
        raise
    logger.info("user %r renamed to %r: %s%s", old, target, moved, " and its files" if files_moved else "")
    return Renamed(old, target, moved, files_moved)


def _undo(target_dir: Path, source_dir: Path, files_moved: bool) -> None:
    if files_moved:
        target_dir.rename(source_dir)


def refused_names(engine: Engine) -> list[tuple[str, str]]:
    """Stored names the current rule refuses or would rewrite: ``(name, why)``, sorted by name.

    ``why`` is the rule's sentence, or ``"stored as {canonical!r}"``-style advice when the name is
    only not in canonical form (it still needs a rename to be reached).
    """
    found: list[tuple[str, str]] = []
    for name in sorted(user_rename.stored_names(engine)):
        try:
            canonical_name = normalize_user_name(name)
        except InvalidUserName as bad:
            found.append((name, bad.message))
            continue
        if canonical_name != name:
            found.append((name, f"not in canonical form: callers reach it only as {canonical_name!r}"))
    return found
