"""The workspace panel in a real browser against the whole app: an upload and a file the agent
wrote are listed with size and time, previewed and downloadable; another session's file is refused.
Attachments: chips on sent messages (also after a reload), and files dropped on the composer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
USER = "workspace-e2e"
SESSION_IN_URL = re.compile(r"[?&]session=([0-9a-f-]{36})")
REPORT = "# Airflow report\n\nThe **main fan** delivers 120 m³/s.\n"


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-workspace")
    with ReflexApp({**app_env(data_dir, llm.base_url), "DEMO_MODE": "1"}, data_dir / "reflex.log") as running:
        yield running


def test_panel_lists_previews_and_downloads_the_session_files(
    browser: Browser, app: ReflexApp, llm: ScriptedServer
) -> None:
    page: Page = open_chat(browser, app.url, USER, TIMEOUT_MS)
    page.locator(".attach-upload input[type=file]").set_input_files(
        files=[{"name": "fan.csv", "mimeType": "text/csv", "buffer": b"q,p\n12,340\n"}]
    )
    expect(page.locator(".attachment-chip")).to_have_count(1)
    write = {"file_path": "/workspace/report.md", "content": REPORT}
    llm.push({"tool_calls": [{"name": "write_file", "arguments": write}]}, {"content": "Report written."})
    page.fill("#chat-input", "write a report on my fan")
    page.click("#send")
    expect(page.locator(".msg-assistant").last).to_contain_text("Report written.")
    expect(page).to_have_url(SESSION_IN_URL)
    match = SESSION_IN_URL.search(page.url)
    assert match
    session_id = match.group(1)
    chip = page.locator(".user-row .sent-attachment")
    expect(chip).to_have_attribute("data-path", "/workspace/uploads/fan.csv")  # the sent message shows it
    page.reload()
    expect(page.locator(".msg-assistant").last).to_contain_text("Report written.")
    expect(chip).to_have_attribute("data-path", "/workspace/uploads/fan.csv")  # also after a reload
    expect(chip).to_have_text("fan.csv")

    page.click("#workspace-open")
    panel = page.locator(".workspace-panel")
    rows = panel.locator(".workspace-file")
    expect(rows).to_have_count(2)
    upload = panel.locator('.workspace-file[data-path="/workspace/uploads/fan.csv"]')
    report = panel.locator('.workspace-file[data-path="/workspace/report.md"]')
    expect(upload.locator(".workspace-size")).to_have_text("0.1 kB")  # 11 bytes
    expect(report.locator(".workspace-time")).to_have_text(re.compile(r"\d{1,2}:\d{2}"))

    report.locator(".workspace-preview").click()
    view = panel.locator(".workspace-view")
    expect(view).to_have_attribute("data-kind", "markdown")
    expect(view.locator("h1")).to_have_text("Airflow report")
    expect(view.locator("strong")).to_have_text("main fan")
    upload.locator(".workspace-preview").click()
    expect(view).to_have_attribute("data-kind", "csv")
    expect(view.locator("td")).to_have_text(["q", "p", "12", "340"])

    link = report.locator(".workspace-download")
    expect(link).to_have_attribute("download", "report.md")
    href = link.get_attribute("href")
    assert href and "download=1" in href
    downloaded = httpx.get(f"{app.url}{href}")
    assert downloaded.status_code == 200 and downloaded.text == REPORT
    assert downloaded.headers["content-disposition"].startswith("attachment")

    # The same file of this session is not another user's to read.
    stolen = httpx.get(f"{app.url}{href.replace(f'user_name={USER}', 'user_name=mallory')}")
    assert stolen.status_code == 404
    listing = httpx.get(f"{app.url}/api/sessions/{session_id}/workspace", params={"user_name": "mallory"})
    assert listing.status_code == 404
    page.context.close()


def test_a_file_dropped_on_the_composer_is_attached(browser: Browser, app: ReflexApp) -> None:
    page: Page = open_chat(browser, app.url, "drop-e2e", TIMEOUT_MS)
    page.evaluate(
        """() => {
            const transfer = new DataTransfer();
            transfer.items.add(new File(["q,p\\n1,2\\n"], "dropped.csv", {type: "text/csv"}));
            const zone = document.querySelector(".composer-drop");
            for (const type of ["dragenter", "dragover", "drop"]) {
                zone.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true, cancelable: true}));
            }
        }"""
    )
    expect(page.locator(".attachment-chip")).to_have_attribute("data-path", "/workspace/uploads/dropped.csv")
    page.context.close()
