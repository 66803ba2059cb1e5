"""A migrated SQLite database per test for the identity services."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from ventapp.db.engine import make_engine, upgrade_to_head


@pytest.fixture(scope="session")
def auth_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auth-template") / "template.db"
    upgrade_to_head(f"sqlite:///{path}")
    return path


@pytest.fixture
def engine(auth_template: Path, tmp_path: Path) -> Iterator[sa.Engine]:
    path = tmp_path / "auth.db"
    shutil.copyfile(auth_template, path)
    engine = make_engine(f"sqlite:///{path}")
    yield engine
    engine.dispose()
