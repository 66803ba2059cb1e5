"""Every row a user owns, moved to another name in one transaction (``python -m ventapp.auth
rename-user``; the rules — the target's name, its folder — live in :mod:`ventapp.auth.rename`).

The tables are found, not listed: every table of the models' metadata with a ``user_name``
column (sessions, runs, request keys, the usage ledger and daily totals, quotas, pending
billing, schedules and their runs, preferences, approval rules, accounts, login sessions, API
keys), so a table added later is covered without touching this module. Messages belong to
their session (``session_id``): they do not name the user. The login throttle of the account
(``auth_login_throttle``, keyed ``account:<name>``) moves with it, so failed logins still count
against the account under its new name.

A user with work under way (a run or a schedule claim still ``running``) is not moved
(:class:`UserBusy`): such a run keeps the name it started with and would write its answer, usage
and files under the old one.

The statements are plain ``SELECT … WHERE user_name = :name`` and ``UPDATE … SET user_name``:
the same on SQLite, PostgreSQL and MySQL/MariaDB (identities compare exactly everywhere:
``ventapp.db.models.IDENTITY``).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlmodel import SQLModel

# Imported for their tables: the metadata lists only the models that were imported.
from ventapp.db import auth_models, billing_models, models, preference_models, schedule_models  # noqa: F401
from ventapp.db.auth_models import LoginThrottle
from ventapp.db.models import ExecutionRun
from ventapp.db.schedule_models import ScheduleRun

USER_COLUMN = "user_name"
THROTTLE_TABLE = LoginThrottle.__tablename__
LIVE_STATUS = "running"
"""The status of a run (``execution_runs``) or a schedule claim (``schedule_runs``) under way."""


class UserNameTaken(ValueError):
    """The target name already owns rows (``tables``: table name -> row count); nothing moved."""

    def __init__(self, name: str, tables: dict[str, int]) -> None:
        super().__init__(f"{name!r} already has data in {', '.join(sorted(tables))}")
        self.name = name
        self.tables = tables


class UserBusy(RuntimeError):
    """The user has work under way (``live``: table name -> ids still ``running``); nothing moved."""

    def __init__(self, name: str, live: dict[str, list[str]]) -> None:
        super().__init__(f"{name!r} has work under way in {', '.join(sorted(live))}")
        self.name = name
        self.live = live


def user_tables() -> list[sa.Table]:
    """Every table with a ``user_name`` column, in the metadata's dependency order."""
    return [table for table in SQLModel.metadata.sorted_tables if USER_COLUMN in table.c]


def _counts(connection: Connection, user_name: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in user_tables():
        query = sa.select(sa.func.count()).select_from(table).where(table.c[USER_COLUMN] == user_name)
        count = int(connection.execute(query).scalar_one())
        if count:
            counts[table.name] = count
    return counts


def _live(connection: Connection, user_name: str) -> dict[str, list[str]]:
    live: dict[str, list[str]] = {}
    for model in (ExecutionRun, ScheduleRun):
        table = model.__table__  # type: ignore[attr-defined]  # SQLModel's table
        query = sa.select(table.c.id).where(table.c[USER_COLUMN] == user_name, table.c.status == LIVE_STATUS)
        ids = sorted(str(found) for found in connection.execute(query).scalars())
        if ids:
            live[table.name] = ids
    return live


def live_work(engine: Engine, user_name: str) -> dict[str, list[str]]:
    """Runs (``execution_runs``) and schedule claims (``schedule_runs``) of ``user_name`` still
    ``running``: table name -> ids, tables without any left out."""
    with engine.connect() as connection:
        return _live(connection, user_name)


def rows_of(engine: Engine, user_name: str) -> dict[str, int]:
    """How many rows ``user_name`` (exactly as stored) owns, per table; tables without any left out."""
    with engine.connect() as connection:
        return _counts(connection, user_name)


def stored_names(engine: Engine) -> set[str]:
    """Every distinct ``user_name`` any table holds (to find names the current rule refuses)."""
    names: set[str] = set()
    with engine.connect() as connection:
        for table in user_tables():
            names.update(connection.execute(sa.select(table.c[USER_COLUMN]).distinct()).scalars())
    return names


def move_rows(engine: Engine, old: str, new: str) -> dict[str, int]:
    """Give every row of ``old`` to ``new``, in one transaction.

    Args:
        engine: The app's database.
        old: The name as stored (it may be one the current rule refuses).
        new: The canonical target name (checked by the caller).

    Returns:
        Rows moved per table (tables without any left out), the account's login throttle
        (``auth_login_throttle``) included.

    Raises:
        UserNameTaken: ``new`` already owns rows (checked inside the transaction); nothing moved.
        UserBusy: ``old`` has a run or a schedule claim still ``running`` (checked inside the
            transaction); nothing moved.
    """
    with engine.begin() as connection:
        taken = _counts(connection, new)
        if taken:
            raise UserNameTaken(new, taken)
        live = _live(connection, old)
        if live:
            raise UserBusy(old, live)
        moved: dict[str, int] = {}
        for table in user_tables():
            column = table.c[USER_COLUMN]
            result = connection.execute(sa.update(table).where(column == old).values({USER_COLUMN: new}))
            if result.rowcount:
                moved[table.name] = int(result.rowcount)
        if _move_throttle(connection, old, new):
            moved[THROTTLE_TABLE] = 1
        return moved


def _move_throttle(connection: Connection, old: str, new: str) -> bool:
    """The account's failed logins follow it; a count kept for ``new`` (an account that did not
    exist) gives way. True when a row moved."""
    table = LoginThrottle.__table__  # type: ignore[attr-defined]  # SQLModel's table
    old_key, new_key = f"account:{old}", f"account:{new}"
    if connection.execute(sa.select(table.c.key).where(table.c.key == old_key)).first() is None:
        return False
    connection.execute(sa.delete(table).where(table.c.key == new_key))
    connection.execute(sa.update(table).where(table.c.key == old_key).values(key=new_key))
    return True
