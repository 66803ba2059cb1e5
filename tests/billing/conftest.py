"""Billing fixtures: settings and a switch that breaks writes (the migrated database: ``tests/conftest.py``)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from ventapp.config import Settings, load_settings


def make_settings(**overrides: str) -> Settings:
    """Settings from defaults plus ``overrides`` (env-key → value); never reads .env."""
    environ = {"DEEP_AGENT_ENV_PRIORITY": "none", "MODEL_NAME": "scripted-demo", **overrides}
    return load_settings(environ)


@pytest.fixture
def settings() -> Settings:
    """Default settings with the seeded ``scripted-demo`` model and no quota."""
    return make_settings()


class WriteBreaker:
    """Makes SQL statements that mention ``table`` fail like a full disk, while ``broken`` is set."""

    def __init__(self, engine: sa.Engine) -> None:
        self.tables: tuple[str, ...] = ()
        self.failures = 0
        sa.event.listen(engine, "before_cursor_execute", self._before)

    def break_writes(self, *tables: str) -> None:
        self.tables = tables

    def heal(self) -> None:
        self.tables = ()

    def _before(self, _conn, _cursor, statement: str, _params, _context, _many) -> None:  # type: ignore[no-untyped-def]
        head = statement.lstrip().upper()
        if head.startswith(("INSERT", "UPDATE", "DELETE")) and any(t.upper() in head for t in self.tables):
            self.failures += 1
            raise sa.exc.OperationalError(statement, {}, Exception("database or disk is full"))


@pytest.fixture
def breaker(engine: sa.Engine) -> WriteBreaker:
    """A :class:`WriteBreaker` on ``engine`` (healthy until told otherwise)."""
    return WriteBreaker(engine)
