"""What a tab shows when the server stops while it streams an answer (SIGTERM), in a real browser.

The whole app (prod build) with a scripted model that streams one word every 300 ms, so the answer
is still streaming when the server is told to stop.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.browser import open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env
from ventapp.i18n import MESSAGES

TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def slow_llm() -> Iterator[ScriptedServer]:
    with ScriptedServer(delay_ms=300) as server:
        yield server


def test_a_streaming_answer_shows_the_shutdown_sentence_then_the_lost_connection_in_chinese(
    browser: Browser, slow_llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Tester: at SIGTERM the Chinese tab showed only Reflex's English toast "Cannot connect to server:
    websocket error…", never our shutdown sentence (the stored answer had it after a restart): Granian
    dropped the event socket as soon as it handled the signal, before the sentence was sent."""
    data_dir = tmp_path_factory.mktemp("reflex-shutdown")
    env = {**app_env(data_dir, slow_llm.base_url), "DEMO_MODE": "1"}
    slow_llm.reset()
    slow_llm.push({"content": long_answer(200)})
    app = ReflexApp(env, data_dir / "reflex.log").__enter__()
    try:
        tab = open_chat(browser, app.url, "shutdown-e2e", TIMEOUT_MS, locale="zh-CN", width=1400)
        tab.fill("#chat-input", "long answer please")
        tab.click("#send")
        live = tab.locator(".msg-live")
        expect(live).to_have_attribute("data-state", "streaming")
        expect(live).to_contain_text("Ventilation", timeout=TIMEOUT_MS)
        assert app.stop() == 0, (data_dir / "reflex.log").read_text()[-3000:]
        expect(tab.get_by_text(MESSAGES["zh-CN"]["run_error.server_stopping"])).to_be_visible()
        notice = tab.locator("#connection-lost")
        expect(notice).to_be_visible()
        expect(notice).to_have_text(MESSAGES["zh-CN"]["connection.lost"])
        tab.wait_for_timeout(3000)  # Reflex's toast came at the second failed reconnect, within a second
        expect(tab.get_by_text("Cannot connect to server")).to_have_count(0)
        expect(notice).to_be_visible()
        # Lead (ui12): the notice sat over the header, on the model's name.
        for width in (1400, 390):
            tab.set_viewport_size({"width": width, "height": 900})
            tab.screenshot(path=str(data_dir / f"connection-lost-{width}.png"))
            box, header = notice.bounding_box(), tab.locator(".chat-header").bounding_box()
            assert box and header and box["y"] >= header["y"] + header["height"], (width, box, header)
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (width, box)
            assert box["height"] < 60, f"not squeezed into lines at {width} px: {box}"
    finally:
        app.__exit__()
        print((data_dir / "reflex.log").read_text()[-4000:])  # shown if the test fails
