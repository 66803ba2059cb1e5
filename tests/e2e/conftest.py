"""Fixtures every browser test module shares."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.browser import chromium

# Playwright's default of 5 s for an expectation is for a quiet desktop; CI runs Chromium, the app
# and the scripted model on two cores, where a stopped run once settled after more than 5 s.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium through Playwright, one per test module (``tests.e2e.browser``)."""
    with chromium() as instance:
        yield instance


APP_LOG_TAIL_CHARS = 6000


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed browser test's report ends with the app's log: CI keeps nothing else of the run."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]  # pluggy's result object
    if report.when != "call" or not report.failed:
        return
    app = getattr(item, "funcargs", {}).get("app")
    log_path = getattr(app, "log_path", None)
    if log_path is not None and log_path.exists():
        tail = log_path.read_text(errors="replace")[-APP_LOG_TAIL_CHARS:]
        report.sections.append(("app log (its end)", tail or "(empty)"))
