"""What text may hold: person-typed names and long text are checked, machine text is made storable.

Two kinds of text reach the database:

* **Typed by a person** (a chat message, a title, a schedule's name and prompt, preferences, an
  upload's file name): refused when it breaks the rule, so the person can fix it.

  - one-line names (user names, session titles, schedule names, upload file names) must not hold
    control, format (zero-width, bidi override/isolate), surrogate or private-use characters
    (:func:`invisible_character`): ``报告\\u202egpj.exe`` would show as ``报告exe.jpg``;
  - long free text may hold tabs and line breaks but never NUL (:func:`holds_nul`): PostgreSQL
    text columns cannot store U+0000 at all, and SQLite would store what PostgreSQL refuses.

* **Produced by a machine** (the model's answer and reasoning, tool results and arguments,
  citations, error sentences): never refused; the database layer writes it through
  :func:`storable`, which replaces U+0000 with U+FFFD, on every backend alike.

This module sits at the bottom of the layers (it imports nothing of ours): the user-name rule
(:mod:`ventapp.identity`), the API, the UI state and the database layer all use it.
"""

from __future__ import annotations

import unicodedata
from typing import Any

NUL = "\x00"
REPLACEMENT = "\ufffd"
"""What a NUL in machine-produced text is stored as (U+FFFD REPLACEMENT CHARACTER)."""

INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})
"""Control (NUL, ESC, tab …), format (zero-width space/joiners, BOM, bidi overrides U+202A–U+202E
and isolates U+2066–U+2069, marks U+200E/U+200F), surrogates and private use: invisible or
unprintable, so two names could look alike or one could show its characters in another order."""


def invisible_character(text: str) -> str | None:
    """The first character of ``text`` a one-line name must not hold, else None.

    Args:
        text: A name as typed (a user name, session title, schedule name, upload file name).

    Returns:
        The first character whose Unicode category is in :data:`INVISIBLE_CATEGORIES`
        (e.g. ``"\\u202e"`` for ``"a\\u202eb"``), or None when there is none.
    """
    return next((ch for ch in text if unicodedata.category(ch) in INVISIBLE_CATEGORIES), None)


def without_invisible(text: str) -> str:
    """``text`` without the characters :func:`invisible_character` finds: for a name typed or pasted
    into the browser UI (a zero-width space pasted from a chat app cannot be seen, so a person told to
    remove it could not find it, try21); the name kept is the one the box showed. API clients keep
    the refusal."""
    return "".join(ch for ch in text if unicodedata.category(ch) not in INVISIBLE_CATEGORIES)


def holds_nul(value: Any) -> bool:
    """Whether ``value`` (a string, or lists/tuples/dicts of them, keys included) holds U+0000.

    Long free text typed by a person (a chat message, a schedule prompt, preferences, an answer
    to the agent's question) is refused when this is True. Other values (numbers, None) never do.
    """
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, dict):
        return any(holds_nul(key) or holds_nul(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(holds_nul(item) for item in value)
    return False


def without_nul(text: str) -> str:
    """``text`` with its NULs dropped: for what a person pasted into the browser UI's message boxes.

    A text box shows no NUL, so a person told to remove one could not find it (try20); the UI sends
    the text as it shows it. API clients keep the refusal (:func:`holds_nul`): their text is a
    program's, and its author can see the byte.
    """
    return text.replace(NUL, "") if NUL in text else text


def storable(value: Any) -> Any:
    """``value`` with every U+0000 in its strings replaced by U+FFFD (dict keys too).

    For machine-produced text about to be written: PostgreSQL refuses NUL in ``text`` columns
    (``psycopg.DataError``) and as ``\\u0000`` in ``jsonb``, so every backend stores the same
    replacement. Strings, lists, tuples (returned as lists) and dicts are walked; anything else
    is returned as it is. A value without NUL comes back unchanged (the same object for a string).
    """
    if isinstance(value, str):
        return value.replace(NUL, REPLACEMENT) if NUL in value else value
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable(item) for item in value]
    return value
