"""The one rule for ``user_name``, the self-declared identity every route and the UI use.

Today identity is what the client states (spec 000 §六 gap 1), so the same person must
never become two identities because of invisible differences, and a name must never
carry characters that corrupt logs or terminals. :func:`normalize_user_name` is that
rule; the API's identity dependency (``ventapp.api.deps``) and the UI's name dialog
(``ventapp.state``) both call it.

The rule, in order:

1. absent (``None``) → ``default`` (spec 002: ``user_name`` 缺省 ``default``);
2. Unicode NFC, so a composed and a decomposed ``é`` are one name;
3. whitespace trimmed at both ends and every inner run of whitespace (spaces, tabs,
   no-break spaces, line breaks) folded to one space;
4. given but blank after that → refused (a blank name is a client bug, not ``default``);
5. control, format (zero-width, bidi), surrogate and private-use characters → refused (the
   one-line name rule titles, schedule names and file names share, :mod:`ventapp.text_rules`);
6. longer than :data:`MAX_USER_NAME_CHARS` characters → refused;
7. anything but letters, marks, digits, spaces and :data:`NAME_PUNCTUATION` → refused: ``/``,
   ``\\``, ``:``, quotes, ``<>``, ``|``, ``*``, ``?``, ``%``, ``;``, ``$`` … are path, shell, URL or
   markup syntax somewhere a name travels (file names, logs, headers, the CLI), never part of a name.

The same rule holds wherever a name comes in: API parameters and bodies, the trusted proxy's
header, the login form, the UI's name dialog, ``AUTH_NONE_OPERATORS`` (checked when the settings
load: this module sits at the bottom of the layers for that) and ``python -m ventapp.auth
create-user`` / ``rename-user``.
"""

from __future__ import annotations

import unicodedata

from ventapp.text_rules import invisible_character

DEFAULT_USER = "default"
"""The identity of a request that does not name one."""
MAX_USER_NAME_CHARS = 128

NAME_PUNCTUATION = "._-@+'"
"""The punctuation a name may hold besides letters, digits and spaces (e-mail style names,
``O'Brien``)."""
_NAME_CATEGORIES = ("L", "M", "N")
"""Unicode letters (any script), combining marks and digits."""


class InvalidUserName(ValueError):
    """``user_name`` breaks the rule; ``message`` is a sentence for people (English).

    ``cause`` says which part of the rule, so a UI can word it in its own language:
    ``blank``, ``invisible``, ``too_long``, ``unsafe`` (then ``character`` is the first
    character refused) or ``no_letter`` (only punctuation, e.g. ``..``).
    """

    def __init__(self, message: str, cause: str = "invisible", character: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        self.character = character


def normalize_user_name(raw: str | None) -> str:
    """The canonical form of a stated user name.

    Args:
        raw: The name as the client sent it; ``None`` when it sent none.

    Returns:
        The name to store and compare (``"default"`` for ``None``), e.g.
        ``"  Li\\u00a0\\tWei "`` → ``"Li Wei"``.

    Raises:
        InvalidUserName: Blank, more than 128 characters, holding control or invisible
            characters, or a character outside letters, digits, spaces and ``._-@+'``.
    """
    if raw is None:
        return DEFAULT_USER
    name = " ".join(unicodedata.normalize("NFC", raw).split())
    if not name:
        raise InvalidUserName("user_name must not be blank: enter a name.", "blank")
    if invisible_character(name) is not None:  # the one-line name rule (ventapp.text_rules)
        raise InvalidUserName(
            "user_name must not contain control or invisible (zero-width) characters.", "invisible"
        )
    if len(name) > MAX_USER_NAME_CHARS:
        raise InvalidUserName(f"user_name must be at most {MAX_USER_NAME_CHARS} characters.", "too_long")
    unsafe = next((ch for ch in name if not _allowed(ch)), None)
    if unsafe is not None:
        raise InvalidUserName(
            f"user_name may hold only letters, digits, spaces and {' '.join(NAME_PUNCTUATION)}"
            f" (not {unsafe!r}).",
            "unsafe",
            unsafe,
        )
    if not any(unicodedata.category(ch).startswith(("L", "N")) for ch in name):
        raise InvalidUserName("user_name must hold at least one letter or digit.", "no_letter")
    return name


def _allowed(ch: str) -> bool:
    return ch == " " or ch in NAME_PUNCTUATION or unicodedata.category(ch).startswith(_NAME_CATEGORIES)
