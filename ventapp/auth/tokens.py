"""Random tokens for login sessions and personal API keys, and their stored form.

A token carries 256 bits from :mod:`secrets`; the database keeps only its SHA-256, so a copy of
the database lets nobody log in. API keys read ``va_<id>_<secret>``: the id (shown in lists)
finds nothing by itself; the whole string is hashed.
"""

from __future__ import annotations

import hashlib
import secrets

API_KEY_PREFIX = "va_"


def new_token() -> str:
    """A new session token: 43 URL-safe characters (256 bits)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The stored form of a token: 64 hex characters of SHA-256."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_api_key() -> tuple[str, str]:
    """A new personal API key.

    Returns:
        ``(key_id, plaintext)``: ``key_id`` is 12 hex characters, ``plaintext`` is
        ``va_<key_id>_<43 characters>``, shown to its owner once.
    """
    key_id = secrets.token_hex(6)
    return key_id, f"{API_KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def looks_like_api_key(token: str) -> bool:
    """True for a string of the API key shape (a cheap filter before the database is asked)."""
    return token.startswith(API_KEY_PREFIX) and token.count("_") >= 2 and len(token) <= 200
