"""Every row of a user moves to another name in one transaction (``ventapp.db.user_rename``), on
every engine (PostgreSQL and MariaDB are throwaway servers from tests/servers.py)."""

from __future__ import annotations

import itertools
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from ventapp.db import user_rename
from ventapp.db.engine import make_engine, upgrade_to_head

OLD = "ops/admin"  # saved before the user-name rule
NEW = "ops-admin"
_ids = itertools.count(1)


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A database migrated to head on each engine."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'rename.db'}"
    else:
        url = request.getfixturevalue(f"{request.param}_server").create_database()
    upgrade_to_head(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


def _value(column: sa.Column[Any], user_name: str, parents: dict[str, str]) -> Any:
    """A value for a required column: the owner, the parent row's id, or one of the column's type."""
    if column.name == user_rename.USER_COLUMN:
        return user_name
    for key in column.foreign_keys:
        return parents[key.column.table.name]
    kind = _type(column)
    if isinstance(kind, sa.String):
        return f"{column.name[:8]}-{next(_ids)}"
    if isinstance(kind, sa.DateTime):
        return datetime(2026, 12, 1, 8, 0)
    if isinstance(kind, sa.Date):
        return date(2026, 12, 1)
    if isinstance(kind, sa.Boolean):
        return False
    if isinstance(kind, sa.JSON):
        return {}
    return 0


def _seed(engine: sa.Engine, user_name: str) -> dict[str, str]:
    """One row of ``user_name`` in every table keyed by ``user_name`` (parents first)."""
    ids: dict[str, str] = {}
    with engine.begin() as connection:
        for table in user_rename.user_tables():
            for key in (fk for column in table.c for fk in column.foreign_keys):
                parent = key.column.table
                if parent.name not in ids:  # e.g. the session a run belongs to
                    row = {c.name: _value(c, user_name, ids) for c in parent.c if _required(c)}
                    connection.execute(sa.insert(parent).values(row))
                    ids[parent.name] = row["id"]
            row = {c.name: _value(c, user_name, ids) for c in table.c if _required(c)}
            connection.execute(sa.insert(table).values(row))
            if "id" in row:
                ids[table.name] = row["id"]
    return ids


def _finish(engine: sa.Engine, user_name: str) -> None:
    """Mark the user's seeded runs and schedule claims (``running`` by default) as ended."""
    with engine.begin() as connection:
        for table in user_rename.user_tables():
            if table.name in ("execution_runs", "schedule_runs"):
                column = table.c[user_rename.USER_COLUMN]
                connection.execute(sa.update(table).where(column == user_name).values(status="interrupted"))


def _type(column: sa.Column[Any]) -> Any:
    """The column's SQL type under a decorator (SQLModel's ``AutoString``)."""
    return column.type.impl if isinstance(column.type, sa.TypeDecorator) else column.type


def _required(column: sa.Column[Any]) -> bool:
    if column.primary_key and isinstance(_type(column), sa.String):
        return True  # its value is needed: the id a child row points at
    return (
        not column.nullable
        and column.default is None
        and column.server_default is None
        and not (column.primary_key and isinstance(_type(column), sa.Integer))
    )


def test_every_table_of_the_migrated_schema_with_a_user_name_is_covered(engine: sa.Engine) -> None:
    inspector = sa.inspect(engine)
    keyed = {
        name
        for name in inspector.get_table_names()
        if any(column["name"] == "user_name" for column in inspector.get_columns(name))
    }
    assert keyed == {table.name for table in user_rename.user_tables()}


def test_every_row_moves_and_nothing_else(engine: sa.Engine) -> None:
    _seed(engine, OLD)
    _seed(engine, "someone else")
    _finish(engine, OLD)
    before = user_rename.rows_of(engine, OLD)
    assert set(before) == {table.name for table in user_rename.user_tables()}

    moved = user_rename.move_rows(engine, OLD, NEW)

    assert moved == before
    assert user_rename.rows_of(engine, OLD) == {}
    assert user_rename.rows_of(engine, NEW) == before
    assert user_rename.rows_of(engine, "someone else") == before, "nobody else's rows move"
    assert {OLD, NEW, "someone else"} - user_rename.stored_names(engine) == {OLD}


def test_a_user_with_a_run_or_schedule_claim_under_way_moves_nothing(engine: sa.Engine) -> None:
    ids = _seed(engine, OLD)  # its run and schedule claim are ``running``
    before = user_rename.rows_of(engine, OLD)

    with pytest.raises(user_rename.UserBusy) as busy:
        user_rename.move_rows(engine, OLD, NEW)

    assert busy.value.live == {
        "execution_runs": [ids["execution_runs"]],
        "schedule_runs": [ids["schedule_runs"]],
    }
    assert user_rename.live_work(engine, OLD) == busy.value.live
    assert user_rename.rows_of(engine, OLD) == before, "the transaction moved nothing"
    _finish(engine, OLD)
    assert user_rename.live_work(engine, OLD) == {}


def test_a_target_that_already_has_data_moves_nothing(engine: sa.Engine) -> None:
    _seed(engine, OLD)
    _seed(engine, NEW)
    before = user_rename.rows_of(engine, OLD)

    with pytest.raises(user_rename.UserNameTaken) as taken:
        user_rename.move_rows(engine, OLD, NEW)

    assert taken.value.tables == before
    assert user_rename.rows_of(engine, OLD) == before, "the transaction moved nothing"
