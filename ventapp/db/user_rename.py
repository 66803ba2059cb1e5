"""Every row a user owns, moved to another name in one transaction (``python -m ventapp.auth
rename-user``; the rules — the target's name, its folder — live in :mod:`ventapp.auth.rename`).

The tables are found, not listed: every table of the models' metadata with a ``user_name``
column (sessions, runs, request keys, the usage ledger and daily totals, quotas, pending
billing, schedules and their runs, preferences, approval rules, accounts, login sessions, API
keys), so a table added later is covered without touching this module. Messages belong to
their session (``session_id``) and graph state to its thread (the session id): neither names
the user. Login throttles are keyed ``account:<name>`` and expire on their own
(``AUTH_LOGIN_WINDOW_S``); they are left alone.

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

USER_COLUMN = "user_name"


class UserNameTaken(ValueError):
    """The target name already owns rows (``tables``: table name -> row count); nothing moved."""

    def __init__(self, name: str, tables: dict[str, int]) -> None:
        super().__init__(f"{name!r} already has data in {', '.join(sorted(tables))}")
        self.name = name
        self.tables = tables


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
        Rows moved per table (tables without any left out).

    Raises:
        UserNameTaken: ``new`` already owns rows (checked inside the transaction); nothing moved.
    """
    with engine.begin() as connection:
        taken = _counts(connection, new)
        if taken:
            raise UserNameTaken(new, taken)
        moved: dict[str, int] = {}
        for table in user_tables():
            column = table.c[USER_COLUMN]
            result = connection.execute(sa.update(table).where(column == old).values({USER_COLUMN: new}))
            if result.rowcount:
                moved[table.name] = int(result.rowcount)
        return moved
