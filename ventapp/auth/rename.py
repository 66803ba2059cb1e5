"""Renaming a user across the stores (``python -m ventapp.auth rename-user OLD NEW``).

For people whose saved name the user-name rule now refuses (a ``/`` saved before the rule, say):
their conversations, runs, usage, quotas, schedules, preferences, approval rules and, with
``AUTH_MODE=local``, account, login sessions and API keys move to a name the rule accepts.

What moves, in this order:

1. checks: ``NEW`` follows the rule of every route (:func:`ventapp.identity.normalize_user_name`);
   ``OLD`` (taken exactly as stored: it may be refused by the rule) owns rows or files; ``NEW``
   owns neither (a rename never merges two people);
2. the spool (``DATA_DIR/spool.jsonl``: answers and usage the database once refused, each naming
   its user) is written back first, as the app does at start-up, so those rows land under ``OLD``
   and move with the rest; an entry of ``OLD`` the database still refuses stops the rename (409
   ``busy``), since written back later it would book under the old name;
3. ``OLD`` must have no work under way: a run or a schedule claim still ``running`` is 409
   ``busy`` (it would write its answer, usage and files under the old name);
4. the owner in the graph-state checkpoints' metadata (the run's ``configurable``, which
   LangGraph copies into each checkpoint) is rewritten
   (:func:`ventapp.agent.checkpointers.rename_checkpoint_owner`);
5. the workspace folder (``WORKSPACES_DIR/<hash(user)>``, every session's files) is renamed;
6. every row with a ``user_name`` moves in one transaction, and the account's login throttle
   with it (:mod:`ventapp.db.user_rename`); should that fail, the folder and the checkpoints are
   put back.

Steps 2 and 4 need the app's settings (``settings``); without them only the database and the
folder move. Nothing else keys by user name: schedules' APScheduler jobs are named by the
schedule id and rebuilt from the ``schedules`` table (which moves), and a run's in-memory or Redis
event log lives only while the run does and shortly after (the check in step 3 keeps live ones
out). Run it with the app stopped, or at least while that user has no answer running.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine

from ventapp.agent.checkpointers import rename_checkpoint_owner
from ventapp.agent.workspace import user_dir
from ventapp.agent.writeback import RUN, write_back
from ventapp.auth.service import AuthRejected, canonical
from ventapp.config import Settings
from ventapp.db import user_rename
from ventapp.db.spool import Spool, SpoolEntry
from ventapp.identity import InvalidUserName, normalize_user_name

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Renamed:
    """What a rename moved: rows per table, whether a workspace folder moved, checkpoints rewritten."""

    old: str
    new: str
    rows: dict[str, int]
    files_moved: bool
    checkpoints: int = 0


def rename_user(
    engine: Engine, workspaces_dir: Path, old: str, new: str, *, settings: Settings | None = None
) -> Renamed:
    """Move everything ``old`` owns to ``new`` (see the module docstring for the order).

    Args:
        engine: The app's database.
        workspaces_dir: ``Settings.workspaces_dir``.
        old: The name exactly as stored.
        new: The name to move to; made canonical by the rule.
        settings: The app's settings, for its spool file and checkpoint store; None moves only
            the database rows and the folder.

    Returns:
        What moved.

    Raises:
        AuthRejected: 400 ``bad_request`` when ``new`` breaks the rule or equals ``old``; 404
            ``not_found`` when ``old`` owns nothing; 409 ``conflict`` when ``new`` already owns
            rows or files; 409 ``busy`` when ``old`` has a run or schedule claim under way or a
            write the database still refuses in the spool; 503 ``storage`` when the checkpoint
            store refuses the rewrite. Nothing has moved then.
        OSError: The folder could not be renamed (nothing has moved).
    """
    target = canonical(new)
    if target == old:
        raise AuthRejected.by_key(400, "bad_request", "refusal.rename.same", old=repr(old), new=repr(new))
    rows = user_rename.rows_of(engine, old)
    source_dir, target_dir = user_dir(workspaces_dir, old), user_dir(workspaces_dir, target)
    if not rows and not source_dir.exists():
        raise AuthRejected.by_key(404, "not_found", "refusal.rename.nothing_stored", old=repr(old))
    taken = user_rename.rows_of(engine, target)
    if taken:
        tables = ", ".join(sorted(taken))
        raise AuthRejected.by_key(409, "conflict", "refusal.rename.taken", new=repr(target), tables=tables)
    if target_dir.exists():
        raise AuthRejected.by_key(409, "conflict", "refusal.rename.taken_folder", new=repr(target))
    if settings is not None:
        _write_back_spool(engine, settings, old)
    live = user_rename.live_work(engine, old)
    if live:
        raise _busy(old, live)
    checkpoints = _rename_checkpoints(settings, old, target) if settings is not None else 0
    files_moved = source_dir.exists()
    try:
        if files_moved:
            source_dir.rename(target_dir)
    except BaseException:
        _undo(settings, old, target, checkpoints)
        raise
    try:
        moved = user_rename.move_rows(engine, old, target)
    except user_rename.UserNameTaken as raced:  # rows for the target appeared meanwhile
        _undo(settings, old, target, checkpoints, target_dir, source_dir, files_moved)
        tables = ", ".join(sorted(raced.tables))
        raise AuthRejected.by_key(
            409, "conflict", "refusal.rename.taken_meanwhile", new=repr(target), tables=tables
        ) from None
    except user_rename.UserBusy as started:  # a run started meanwhile
        _undo(settings, old, target, checkpoints, target_dir, source_dir, files_moved)
        raise _busy(old, started.live) from None
    except BaseException:
        _undo(settings, old, target, checkpoints, target_dir, source_dir, files_moved)
        raise
    logger.info(
        "user %r renamed to %r: %s, %d checkpoint(s)%s",
        old,
        target,
        moved,
        checkpoints,
        " and its files" if files_moved else "",
    )
    return Renamed(old, target, moved, files_moved, checkpoints)


def _rename_checkpoints(settings: Settings, old: str, target: str) -> int:
    try:
        return rename_checkpoint_owner(settings, old, target)
    except Exception:  # sqlite3.Error, psycopg.Error: the store is locked or away
        logger.exception("could not rewrite the owner of %r's checkpoints", old)
        raise AuthRejected.by_key(
            503, "storage", "refusal.rename.storage", checkpointer=settings.checkpointer
        ) from None


def _busy(old: str, live: dict[str, list[str]]) -> AuthRejected:
    listed = "; ".join(f"{table}: {', '.join(ids)}" for table, ids in sorted(live.items()))
    return AuthRejected.by_key(409, "busy", "refusal.rename.busy", old=repr(old), listed=listed)


def _write_back_spool(engine: Engine, settings: Settings, old: str) -> None:
    """Replay the spool (as the app's start-up does); refuse while an entry of ``old`` stays parked."""
    spool = Spool(settings.spool_path)
    if not spool.count():
        return
    write_back(engine, spool)
    left = [entry for entry in spool.pending() if _owner(entry) == old]
    if left:
        # The English plural by count (Chinese has one form); t() has no plural of its own.
        key = "refusal.rename.parked_one" if len(left) == 1 else "refusal.rename.parked_other"
        raise AuthRejected.by_key(
            409, "busy", key, count=len(left), old=repr(old), path=str(settings.spool_path)
        )


def _owner(entry: SpoolEntry) -> str | None:
    """The user a parked write books for: a settlement's, or a parked run's settlement's."""
    payload = entry.payload.get("settlement") if entry.kind == RUN else entry.payload
    return str(payload.get("user_name")) if isinstance(payload, dict) else None


def _undo(
    settings: Settings | None,
    old: str,
    target: str,
    checkpoints: int,
    target_dir: Path | None = None,
    source_dir: Path | None = None,
    files_moved: bool = False,
) -> None:
    if files_moved and target_dir is not None and source_dir is not None:
        target_dir.rename(source_dir)
    if checkpoints and settings is not None:
        rename_checkpoint_owner(settings, target, old)


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
