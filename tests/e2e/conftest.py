"""Fixtures every browser test module shares."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from tests.e2e.browser import chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium through Playwright, one per test module (``tests.e2e.browser``)."""
    with chromium() as instance:
        yield instance
