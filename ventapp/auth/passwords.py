"""Password hashing with argon2id (``argon2-cffi``'s ``PasswordHasher``: RFC 9106 defaults).

Never our own crypto: hashing, salts, parameters and constant-time comparison are the library's.
A hash made with older parameters is re-made at the next successful login (:func:`needs_rehash`).
"""

from __future__ import annotations

import functools

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MIN_PASSWORD_CHARS = 10
MAX_PASSWORD_CHARS = 1024
"""Longer inputs are refused before hashing (argon2 would take them, but a megabyte-long
"password" is a way to burn CPU, not a password)."""

_hasher = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    # Made at the first check of an unknown account, not at import: one argon2 hash is ~0.2 s
    # of CPU (and 64 MiB) that every start-up of the app and of the CLI paid (issue 18).
    return _hasher.hash("not a password of anyone: equalises the time of unknown accounts")


class WeakPassword(ValueError):
    """The new password breaks the rule; ``message`` is a sentence for people (English).

    ``key`` is the catalogue id that words it in another language (``refusal.auth.password_*``)
    and ``limit`` the number of characters it names.
    """

    def __init__(self, message: str, key: str = "", limit: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.limit = limit


def check_rule(password: str) -> None:
    """Refuse a password that is too short or too long.

    Raises:
        WeakPassword: Fewer than :data:`MIN_PASSWORD_CHARS` or more than
            :data:`MAX_PASSWORD_CHARS` characters.
    """
    if len(password) < MIN_PASSWORD_CHARS:
        raise WeakPassword(
            f"The password must have at least {MIN_PASSWORD_CHARS} characters.",
            "refusal.auth.password_short",
            MIN_PASSWORD_CHARS,
        )
    if len(password) > MAX_PASSWORD_CHARS:
        raise WeakPassword(
            f"The password must have at most {MAX_PASSWORD_CHARS} characters.",
            "refusal.auth.password_long",
            MAX_PASSWORD_CHARS,
        )


def hash_password(password: str) -> str:
    """The argon2id hash (PHC string, ~100 characters) of a password that passes :func:`check_rule`.

    Raises:
        WeakPassword: The password breaks the rule.
    """
    check_rule(password)
    return _hasher.hash(password)


def verify_password(stored_hash: str | None, password: str) -> bool:
    """True when ``password`` matches ``stored_hash``. Blocking (~50 ms): call in a thread.

    A missing hash (an unknown account, or one without a password) is checked against a dummy
    hash, so the answer takes as long as for a real account and does not reveal which exist.
    """
    if len(password) > MAX_PASSWORD_CHARS:
        return False
    try:
        return _hasher.verify(stored_hash or _dummy_hash(), password) and stored_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored_hash: str) -> bool:
    """True when the hash was made with other parameters than today's."""
    return _hasher.check_needs_rehash(stored_hash)
