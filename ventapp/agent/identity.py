"""The identity rule, as the agent layer and those above it have always imported it.

The rule itself lives in :mod:`ventapp.identity`, at the bottom of the layers, so that the
configuration (``AUTH_NONE_OPERATORS``) is checked against it when the settings load.
"""

from __future__ import annotations

from ventapp.identity import (
    DEFAULT_USER,
    MAX_USER_NAME_CHARS,
    NAME_PUNCTUATION,
    InvalidUserName,
    normalize_user_name,
)

__all__ = [
    "DEFAULT_USER",
    "MAX_USER_NAME_CHARS",
    "NAME_PUNCTUATION",
    "InvalidUserName",
    "normalize_user_name",
]
