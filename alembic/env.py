"""Alembic environment: metadata from SQLModel, URL from ``ventapp.config`` unless set by the caller."""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlmodel import SQLModel

import ventapp.db.billing_models  # noqa: F401  (registers the billing tables too)
from ventapp.config import get_settings
from ventapp.db import auth_models, models, preference_models, schedule_models  # noqa: F401  (register the tables)
from ventapp.db.engine import database_lock, driver_url, include_object, make_engine

config = context.config
if config.config_file_name is not None and not config.attributes.get("skip_logging"):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = SQLModel.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return driver_url(url)
    try:
        return get_settings().database_url
    except ValueError as bad:  # a malformed .env: say which key, not a 30-line traceback
        raise SystemExit(f"configuration error: {bad}") from None


def run_migrations_offline() -> None:
    """Emit SQL without a connection (``alembic upgrade head --sql``)."""
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Apply migrations over a real connection, under the database-wide migration lock."""
    url = _url()
    engine = make_engine(url)
    with database_lock(url, "migrate"), engine.connect() as connection:
        if connection.dialect.name == "mysql":
            # Tables created from now on take utf8mb4 (a server default of latin1 refuses Chinese);
            # revision 0008 converts tables made before.
            connection.exec_driver_sql("ALTER DATABASE CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
            # Commit: left open, this transaction would make Alembic treat the migration as part of
            # an outer one and never commit the final version update.
            connection.commit()
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=True,
            include_object=include_object,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
