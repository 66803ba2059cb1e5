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
5. control, format (zero-width, bidi), surrogate and private-use characters → refused;
6. longer than :data:`MAX_USER_NAME_CHARS` characters → refused.
"""

from __future__ import annotations

import unicodedata

DEFAULT_USER = "default"
"""The identity of a request that does not name one."""
MAX_USER_NAME_CHARS = 128

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})
"""Control (NUL, ESC …), format (zero-width space/joiners, BOM, bidi overrides),
surrogates and private use: invisible or unprintable, so two names could look alike."""


class InvalidUserName(ValueError):
    """``user_name`` breaks the rule; ``message`` is a sentence for people."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def normalize_user_name(raw: str | None) -> str:
    """The canonical form of a stated user name.

    Args:
        raw: The name as the client sent it; ``None`` when it sent none.

    Returns:
        The name to store and compare (``"default"`` for ``None``), e.g.
        ``"  Li\\u00a0\\tWei "`` → ``"Li Wei"``.

    Raises:
        InvalidUserName: Blank, more than 128 characters, or holding control or
            invisible characters.
    """
    if raw is None:
        return DEFAULT_USER
    name = " ".join(unicodedata.normalize("NFC", raw).split())
    if not name:
        raise InvalidUserName("user_name must not be blank: enter a name.")
    if any(unicodedata.category(ch) in _REFUSED_CATEGORIES for ch in name):
        raise InvalidUserName("user_name must not contain control or invisible (zero-width) characters.")
    if len(name) > MAX_USER_NAME_CHARS:
        raise InvalidUserName(f"user_name must be at most {MAX_USER_NAME_CHARS} characters.")
    return name
