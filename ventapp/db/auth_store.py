"""Storage of accounts, login sessions, API keys and login throttles. Access only: the rules
(hashing, expiry, limits) live in :mod:`ventapp.auth`.

Every function is synchronous and opens one short transaction; async callers use
``asyncio.to_thread``. Times are naive UTC (:func:`ventapp.db.models.utcnow`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, delete, select

from ventapp.db.auth_models import Account, ApiKey, LoginSession, LoginThrottle
from ventapp.db.models import utcnow


def get_account(engine: Engine, user_name: str) -> Account | None:
    """The account called ``user_name`` (exact, canonical name), or None."""
    with Session(engine, expire_on_commit=False) as db:
        return db.get(Account, user_name)


def save_account(
    engine: Engine, user_name: str, *, role: str | None = None, password_hash: str | None = None
) -> Account:
    """Create the account or change its role and/or password hash (None leaves a field as it is)."""
    with Session(engine, expire_on_commit=False) as db:
        account = db.get(Account, user_name) or Account(user_name=user_name)
        if role is not None:
            account.role = role
        if password_hash is not None:
            account.password_hash = password_hash
        account.updated_at = utcnow()
        db.add(account)
        db.commit()
        return account


def list_accounts(engine: Engine) -> list[Account]:
    """Every account, by name."""
    with Session(engine, expire_on_commit=False) as db:
        return list(db.exec(select(Account).order_by(col(Account.user_name))))


def add_session(engine: Engine, token_hash: str, user_name: str, expires_at: datetime) -> None:
    """Store a new login session (and drop expired ones, so the table does not grow)."""
    with Session(engine) as db:
        db.exec(delete(LoginSession).where(col(LoginSession.expires_at) < utcnow()))  # type: ignore[call-overload]  # sqlmodel's delete() is untyped here
        db.add(LoginSession(token_hash=token_hash, user_name=user_name, expires_at=expires_at))
        db.commit()


def live_session(engine: Engine, token_hash: str) -> LoginSession | None:
    """The unexpired session with this token hash, or None."""
    with Session(engine, expire_on_commit=False) as db:
        row = db.get(LoginSession, token_hash)
        return row if row is not None and row.expires_at > utcnow() else None


def delete_session(engine: Engine, token_hash: str) -> None:
    """End one login session (logout); nothing happens for an unknown hash."""
    with Session(engine) as db:
        db.exec(delete(LoginSession).where(col(LoginSession.token_hash) == token_hash))  # type: ignore[call-overload]
        db.commit()


def delete_sessions_of(engine: Engine, user_name: str, keep: str | None = None) -> int:
    """End every login session of a user but ``keep`` (a token hash); returns how many ended."""
    with Session(engine) as db:
        query = delete(LoginSession).where(col(LoginSession.user_name) == user_name)
        if keep is not None:
            query = query.where(col(LoginSession.token_hash) != keep)
        result = db.exec(query)  # type: ignore[call-overload]
        db.commit()
        return int(result.rowcount or 0)


def add_api_key(engine: Engine, key: ApiKey) -> ApiKey:
    """Store a new API key row (its hash only)."""
    with Session(engine, expire_on_commit=False) as db:
        db.add(key)
        db.commit()
        return key


def list_api_keys(engine: Engine, user_name: str) -> list[ApiKey]:
    """The user's keys, revoked ones included, newest first."""
    with Session(engine, expire_on_commit=False) as db:
        query = select(ApiKey).where(ApiKey.user_name == user_name).order_by(col(ApiKey.created_at).desc())
        return list(db.exec(query))


def revoke_api_key(engine: Engine, user_name: str, key_id: str) -> ApiKey | None:
    """Revoke one of the user's keys; None when it is not theirs or does not exist."""
    with Session(engine, expire_on_commit=False) as db:
        key = db.get(ApiKey, key_id)
        if key is None or key.user_name != user_name:
            return None
        if key.revoked_at is None:
            key.revoked_at = utcnow()
            db.add(key)
            db.commit()
        return key


def usable_api_key(engine: Engine, key_hash: str, touch_after_s: float = 60.0) -> ApiKey | None:
    """The unrevoked key with this hash, its ``last_used_at`` refreshed at most once a ``touch_after_s``."""
    with Session(engine, expire_on_commit=False) as db:
        key = db.exec(select(ApiKey).where(ApiKey.key_hash == key_hash)).first()
        if key is None or key.revoked_at is not None:
            return None
        now = utcnow()
        if key.last_used_at is None or now - key.last_used_at > timedelta(seconds=touch_after_s):
            key.last_used_at = now
            db.add(key)
            db.commit()
        return key


def throttle(engine: Engine, key: str) -> LoginThrottle | None:
    """The failure count of an account or address key, or None when it has none."""
    with Session(engine, expire_on_commit=False) as db:
        return db.get(LoginThrottle, key)


def record_failure(engine: Engine, key: str, window_s: int, max_failures: int) -> LoginThrottle:
    """Count one failed login for ``key``; past ``max_failures`` in the window, lock it for ``window_s``."""
    now = utcnow()
    with Session(engine, expire_on_commit=False) as db:
        row = db.get(LoginThrottle, key) or LoginThrottle(key=key, failures=0, window_start=now)
        if now - row.window_start > timedelta(seconds=window_s):
            row.failures, row.window_start = 0, now
        row.failures += 1
        if row.failures >= max_failures:
            row.locked_until = now + timedelta(seconds=window_s)
        db.add(row)
        db.commit()
        return row


def clear_failures(engine: Engine, key: str) -> None:
    """Forget the failures of ``key`` (a successful login of that account)."""
    with Session(engine) as db:
        db.exec(delete(LoginThrottle).where(col(LoginThrottle.key) == key))  # type: ignore[call-overload]
        db.commit()
