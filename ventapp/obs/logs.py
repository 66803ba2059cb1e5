"""Logging set-up and trace ids (usable from every layer; depends on none)."""

from __future__ import annotations

import logging
import uuid

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(level: str = "INFO") -> None:
    """Configure the ``ventapp`` logger once; calling again only changes the level."""
    root = logging.getLogger("ventapp")
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(handler)
        root.propagate = False
    root.setLevel(level)


def new_trace_id() -> str:
    """A fresh trace id: 32 lowercase hex characters (W3C trace-context width)."""
    return uuid.uuid4().hex
