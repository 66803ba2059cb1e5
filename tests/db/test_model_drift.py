"""The SQLModel models match what the migrations build, on every engine (issue 14).

Alembic's autogenerate compares the models with a database migrated to head; any difference —
a column type, a collation, an index — is a migration someone would generate by mistake (or a
model that lies about the schema). Types are compared too (``compare_type``).
"""

from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import ventapp.db.billing_models  # noqa: F401  (registers the tables, as alembic/env.py does)
from ventapp.db import auth_models, models, preference_models, schedule_models  # noqa: F401
from ventapp.db.engine import include_object, make_engine, upgrade_to_head


def _drift(database_url: str) -> list[Any]:
    upgrade_to_head(database_url)
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": True, "include_object": include_object}
            )
            return compare_metadata(context, SQLModel.metadata)
    finally:
        engine.dispose()


@pytest.mark.parametrize("engine_name", ["sqlite", "postgres", "mariadb"])
def test_autogenerate_finds_nothing_to_change_after_the_migrations(
    engine_name: str, request: pytest.FixtureRequest, tmp_path: Any
) -> None:
    if engine_name == "sqlite":
        url = f"sqlite:///{tmp_path / 'drift.db'}"
    else:
        url = request.getfixturevalue(f"{engine_name}_server").create_database()

    assert _drift(url) == []


def _mariadb_columns(url: str) -> set[tuple[str, str, str, str | None]]:
    import sqlalchemy as sa

    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text(
                    "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, COLLATION_NAME FROM information_schema.COLUMNS"
                    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME <> 'alembic_version'"
                )
            )
            return {(row[0], row[1], row[2], row[3]) for row in rows}
    finally:
        engine.dispose()


def test_tables_made_from_the_models_on_mariadb_have_the_migrations_column_types_and_collations(
    mariadb_server: Any,
) -> None:
    migrated = mariadb_server.create_database()
    upgrade_to_head(migrated)
    from_models = mariadb_server.create_database()
    engine = make_engine(from_models)
    try:
        with engine.begin() as connection:
            # What alembic/env.py does before any table: the database's default charset.
            connection.exec_driver_sql("ALTER DATABASE CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
        SQLModel.metadata.create_all(engine)
    finally:
        engine.dispose()

    made = _mariadb_columns(from_models)
    assert ("chat_sessions", "user_name", "varchar(128)", "utf8mb4_bin") in made
    assert made == _mariadb_columns(migrated)
