"""A ventilation network in the Reflex UI, in a real browser: attach the topology, the agent
calls solve_ventilation_network, and the figures it wrote show inline in its tool card, loaded
through the owner-checked ``GET /api/sessions/{id}/files``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.domain.network.benchmark_data import DATA_DIR
from tests.e2e.browser import chromium, open_chat
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000
USER = "network-e2e"


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-network")
    with ReflexApp({**app_env(data_dir, llm.base_url), "DEMO_MODE": "1"}, data_dir / "reflex.log") as running:
        yield running


def test_solved_network_figures_show_inline_in_the_answer(app: ReflexApp, llm: ScriptedServer) -> None:
    with chromium() as browser:
        page: Page = open_chat(browser, app.url, USER, TIMEOUT_MS)
        page.locator(".attach-upload input[type=file]").set_input_files(
            files=[
                {
                    "name": "mine.csv",
                    "mimeType": "text/csv",
                    "buffer": (DATA_DIR / "A_hongshagang_1" / "topology.csv").read_bytes(),
                }
            ]
        )
        expect(page.locator(".attachment-chip")).to_have_count(1)
        llm.push(
            {
                "tool_calls": [
                    {
                        "name": "solve_ventilation_network",
                        "arguments": {"path": "/workspace/uploads/mine.csv", "total_flow": 151.295},
                    }
                ]
            },
            {
                "content": "The network converged; the figures are below.\n\n"
                "![network](/workspace/results/mine-network.png)"
            },
        )
        page.fill("#chat-input", "solve the attached network")
        page.click("#send")
        answer = page.locator(".msg-assistant:not(.msg-live)").last
        expect(answer).to_contain_text("The network converged", timeout=60_000)
        card = answer.locator(".tool-card", has=page.locator("text=solve_ventilation_network"))
        expect(card).to_have_attribute("data-state", "done")
        figures = card.locator("img.tool-figure")
        expect(figures).to_have_count(2)
        for index in range(2):
            figure = figures.nth(index)
            expect(figure).to_be_visible()
            # Loaded, not a broken-image placeholder: the route served the PNG to its owner.
            page.wait_for_function(
                "img => img.complete && img.naturalWidth > 300", arg=figure.element_handle()
            )
        assert "/api/sessions/" in (figures.first.get_attribute("src") or "")
        # The answer's own Markdown image (the network skill asks the model for one) loads too.
        inline = answer.locator(".md-body img[alt='network']")
        expect(inline).to_have_count(1)
        page.wait_for_function("img => img.complete && img.naturalWidth > 300", arg=inline.element_handle())
