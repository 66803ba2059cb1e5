"""Structured settings (``MODELS``, ``MCP_SERVERS``): inline JSON/YAML, or the path of such a file.

One reader for every key whose value is a document rather than a word, so that each accepts
the same spellings and fails with the same kind of message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

FILE_SUFFIXES = (".json", ".yaml", ".yml")


def load_document(raw: str, key: str, root: Path) -> Any:
    """The parsed value of the setting ``key``.

    Args:
        raw: The setting's text: inline JSON or YAML, or one line naming a ``.json``/``.yaml``/
            ``.yml`` file (relative paths are read from ``root``).
        key: The setting's name, for error messages (e.g. ``MODELS``).
        root: Folder a relative file path is read from (the project root).

    Returns:
        The parsed document (a list, mapping or scalar as written); None when ``raw`` is blank.

    Raises:
        ValueError: The file cannot be read, or the text is neither valid JSON nor YAML; the
            message names ``key``.
    """
    text = raw.strip()
    if not text:
        return None
    if text.lower().endswith(FILE_SUFFIXES) and "\n" not in text:
        path = Path(text) if Path(text).is_absolute() else root / text
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{key} names the file {path}, which cannot be read ({exc.strerror})") from None
    try:
        return yaml.safe_load(text)  # YAML is a superset of JSON: both spellings parse
    except yaml.YAMLError as exc:
        raise ValueError(f"{key} is neither valid JSON nor YAML ({exc.__class__.__name__})") from None
