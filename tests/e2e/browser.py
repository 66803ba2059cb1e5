"""Playwright with Debian's Chromium (``playwright install`` cannot download browsers here)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium for one test module."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def watch_csp(page: Page) -> list[str]:
    """Collect the page's Content-Security-Policy violations (Chromium reports them on the console)."""
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return violations


def open_chat(
    browser: Browser,
    url: str,
    user: str,
    timeout_ms: int = 30_000,
    locale: str | None = None,
    width: int = 1280,
) -> Page:
    """A new browser context on the chat page, signed in as ``user``, ready to send.

    Ready means the name dialog is gone and the page's load event has filled the header
    (the model name comes from the server), so a message typed now is not raced by it.
    """
    options = {"locale": locale} if locale else {}
    tab = browser.new_context(viewport={"width": width, "height": 900}, **options).new_page()
    tab.set_default_timeout(timeout_ms)
    tab.goto(url)
    tab.locator("#user-name").fill(user)
    tab.click("#user-name-save")
    expect(tab.locator("#user-name")).to_have_count(0)
    expect(tab.locator("#user-chip")).to_contain_text(user)
    expect(tab.get_by_text("scripted-demo").first).to_be_visible()
    return tab
