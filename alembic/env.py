"""Alembic environment: metadata from SQLModel, URL from ``ventapp.config`` unless set by the caller."""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlmodel import SQLModel

import ventapp.db.billing_models  # noqa: F401  (registers the billing tables too)
from ventapp.config import get_settings
from ventapp.db import auth_models, models, preference_models, schedule_models  # noqa: F401  (register the tables)
from ventapp.db.engine import make_engine

config = context.config
if config.config_file_name is not None and not config.attributes.get("skip_logging"):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = SQLModel.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    try:
        return get_settings().database_url
    except ValueError as bad:  # a malformed .env: say which key, not a 30-line traceback
        raise SystemExit(f"configuration error: {bad}") from None


def run_migrations_offline() -> None:
    """Emit SQL without a connection (``alembic upgrade head --sql``)."""
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Apply migrations over a real connection."""
    engine = make_engine(_url())
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
