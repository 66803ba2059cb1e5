"""Accounts, login sessions, personal API keys and login throttling (SQLModel; issue 15).

Secrets are never stored: a password as its argon2 hash (``ventapp.auth.passwords``), a session
token and an API key as the SHA-256 of the random token handed out once (tokens carry 256 bits of
randomness, so a fast hash is enough; the slow hash is for passwords people choose). Every row is
keyed by the canonical ``user_name`` (``ventapp.agent.identity``), the one identity of the app.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from ventapp.db.models import IDENTITY, TIMESTAMP, utcnow

ROLES = ("user", "operator")


class Account(SQLModel, table=True):
    """A person who may log in (``local`` mode) or whose role is known (every mode).

    ``password_hash`` is None for an account that only carries a role (``header`` mode: the proxy
    authenticates); such an account cannot log in with a password.
    """

    __tablename__ = "auth_accounts"

    user_name: str = Field(primary_key=True, max_length=128, sa_type=IDENTITY)
    password_hash: str | None = Field(default=None, max_length=512)
    role: str = Field(default="user", max_length=16)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)


class LoginSession(SQLModel, table=True):
    """A server-side login session; the browser holds the token in an HTTP-only cookie."""

    __tablename__ = "auth_sessions"

    token_hash: str = Field(primary_key=True, max_length=64)
    user_name: str = Field(index=True, max_length=128, sa_type=IDENTITY)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    expires_at: datetime = Field(sa_type=TIMESTAMP, index=True)


class ApiKey(SQLModel, table=True):
    """A personal API key (``Authorization: Bearer va_<id>_<secret>``), shown once at creation."""

    __tablename__ = "auth_api_keys"

    id: str = Field(primary_key=True, max_length=16)
    user_name: str = Field(index=True, max_length=128, sa_type=IDENTITY)
    name: str = Field(default="", max_length=100)
    key_hash: str = Field(max_length=64, unique=True)
    created_at: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    last_used_at: datetime | None = Field(default=None, sa_type=TIMESTAMP)
    revoked_at: datetime | None = Field(default=None, sa_type=TIMESTAMP)


class LoginThrottle(SQLModel, table=True):
    """Failed logins of one account (``account:<name>``) or one address (``address:<ip>``)."""

    __tablename__ = "auth_login_throttle"

    key: str = Field(primary_key=True, max_length=200)
    failures: int = Field(default=0)
    window_start: datetime = Field(default_factory=utcnow, sa_type=TIMESTAMP)
    locked_until: datetime | None = Field(default=None, sa_type=TIMESTAMP)
