"""A durable place for writes the database refused: an append-only JSON-lines file, fsynced.

When the relational store cannot be written (a locked SQLite file, a full disk, a database
server gone), a finished answer and its usage must not live only in memory or in a log
line. They are appended here, outside the failing database, and written back when it
returns (:mod:`ventapp.agent.writeback`).

File format (``DATA_DIR/spool.jsonl``), one JSON object per line:

* ``{"id": "<uuid>", "kind": "<kind>", "at": "<ISO UTC>", "payload": {...}}`` — a parked write;
* ``{"done": "<id>"}`` — that write reached the database.

Lines are only ever appended, each followed by ``fsync``, so a crash loses at most the
line being written (a torn last line is ignored when read). Once every entry is done the
file is emptied; a file with live entries is never rewritten.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ventapp.db.models import utcnow

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpoolEntry:
    """One parked write.

    Attributes:
        id: Unique id (a UUID4 string); :meth:`Spool.mark_done` takes it.
        kind: What to write back, e.g. ``run`` (an answer and run status) or ``settlement``.
        at: When it was parked (naive UTC).
        payload: JSON-ready data for the writer of that kind.
    """

    id: str
    kind: str
    at: datetime
    payload: dict[str, Any]


class Spool:
    """The append-only spool file. Thread-safe: store calls run in ``asyncio.to_thread`` workers.

    Args:
        path: The file (created on first append, with its folder).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._live: int | None = None  # entries not yet done; None until the file is first read

    def append(self, kind: str, payload: dict[str, Any]) -> str:
        """Park one write durably (written and fsynced before this returns).

        Returns:
            The entry's id.

        Raises:
            OSError: The file cannot be written (disk full, read-only): nothing was parked.
            TypeError: ``payload`` is not JSON-serialisable.
        """
        entry_id = str(uuid.uuid4())
        line = json.dumps(
            {"id": entry_id, "kind": kind, "at": utcnow().isoformat(), "payload": payload},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        with self._lock:
            self._write(line)
            self._live = (self._count() if self._live is None else self._live) + 1
        return entry_id

    def mark_done(self, entry_id: str) -> None:
        """Record that an entry reached the database; empty the file when none is left.

        Raises:
            OSError: The file cannot be written (the entry stays live and is written back
                again later, which the writers make harmless).
        """
        with self._lock:
            self._write(json.dumps({"done": entry_id}))
            # Counted from the file, not decremented: marking an entry twice must not hide another.
            self._live = self._count()
            if self._live == 0:
                self._truncate()

    def pending(self) -> list[SpoolEntry]:
        """The entries not yet done, oldest first."""
        with self._lock:
            entries = self._read()
            self._live = len(entries)
            return entries

    def count(self) -> int:
        """How many entries wait to be written back (reads the file once, then kept in memory)."""
        with self._lock:
            if self._live is None:
                self._live = self._count()
            return self._live

    # --- under the lock -----------------------------------------------------------------

    def _write(self, line: str) -> None:
        created = not self.path.exists()
        if created:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        if created:  # the new directory entry must survive a crash too
            fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _read(self) -> list[SpoolEntry]:
        if not self.path.exists():
            return []
        entries: dict[str, SpoolEntry] = {}
        done: set[str] = set()
        with self.path.open(encoding="utf-8") as handle:
            for number, raw in enumerate(handle, 1):
                try:
                    item = json.loads(raw)
                except ValueError:
                    # A torn line from a crash mid-append; anything after it is still read.
                    logger.warning("skipping unreadable line %d of %s", number, self.path)
                    continue
                if "done" in item:
                    done.add(str(item["done"]))
                elif "id" in item:
                    entries[str(item["id"])] = SpoolEntry(
                        id=str(item["id"]),
                        kind=str(item.get("kind", "")),
                        at=datetime.fromisoformat(item["at"]) if item.get("at") else utcnow(),
                        payload=dict(item.get("payload") or {}),
                    )
        return [entry for entry_id, entry in entries.items() if entry_id not in done]

    def _count(self) -> int:
        return len(self._read())

    def _truncate(self) -> None:
        with self.path.open("w", encoding="utf-8") as handle:
            handle.flush()
            os.fsync(handle.fileno())
