"""A ventilation network in the Reflex UI, in a real browser: attach the topology, the agent
calls solve_ventilation_network, and the figures it wrote show inline, loaded through the
owner-checked ``GET /api/sessions/{id}/files``: each once (the one the answer embeds in the
answer, the other in the tool card), while the answer streams and after a reload alike."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from playwright.sync_api import Locator, Page, expect

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


NETWORK_PNG = "红砂岗-network.png"
"""Tester: a Chinese name was written as ``_-network.png``, shared by every Chinese-named network."""
NETWORK_SRC = quote(NETWORK_PNG)
"""How the page's ``src`` spells it (percent-encoded UTF-8, as the route decodes it)."""
NETWORK_ALT = "img[alt^='Ventilation network solution: airways coloured by airflow']"
"""Tester: the answer's figure was announced as "network" (the model's alt) and the card's by its path."""
CURVES_ALT = "Pressure–flow chart: the fan curves (where there are fans), the network's system curve and the duty points."


def _loaded(page: Page, image: Locator) -> None:
    """Loaded, not a broken-image placeholder: the route served the PNG to its owner."""
    expect(image).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth > 300", arg=image.element_handle())


def _each_figure_once(page: Page, answer: Locator) -> None:
    # Tester: the network figure showed twice, in the tool card and again in the answer.
    card = answer.locator(".tool-card", has=page.locator("text=solve_ventilation_network"))
    inline = answer.locator(".md-body " + NETWORK_ALT)
    expect(inline).to_have_count(1)
    figures = card.locator("img.tool-figure")
    expect(figures).to_have_count(1)
    assert "fan-curve.png" in (figures.first.get_attribute("src") or ""), (
        "the card keeps what the answer lacks"
    )
    expect(answer.locator(f"img[src*='{NETWORK_SRC}']")).to_have_count(1)
    for image in (inline, figures.first):
        _loaded(page, image)
    assert "/api/sessions/" in (figures.first.get_attribute("src") or "")
    assert figures.first.get_attribute("alt") == CURVES_ALT, "what it shows, not its path"


def test_solved_network_figures_show_inline_in_the_answer(app: ReflexApp, llm: ScriptedServer) -> None:
    with chromium() as browser:
        page: Page = open_chat(browser, app.url, USER, TIMEOUT_MS)
        page.locator(".attach-upload input[type=file]").set_input_files(
            files=[
                {
                    "name": "红砂岗.csv",
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
                        "arguments": {"path": "/workspace/uploads/红砂岗.csv", "total_flow": 151.295},
                    }
                ]
            },
            {
                "content": "The network converged; the figures are below.\n\n"
                f"![network](/workspace/results/{NETWORK_PNG})\n\n" + "The flows are balanced. " * 40
            },
        )
        llm.delay_ms = 40  # the answer streams for a few seconds: look at the live bubble meanwhile
        try:
            page.fill("#chat-input", "solve the attached network")
            page.click("#send")
            live = page.locator(".msg-live")
            expect(live.locator(".md-body " + NETWORK_ALT)).to_have_count(1, timeout=60_000)
            expect(live.locator("img.tool-figure")).to_have_count(1)
            expect(live.locator(f"img[src*='{NETWORK_SRC}']")).to_have_count(1)
        finally:
            llm.delay_ms = 0
        answer = page.locator(".msg-assistant:not(.msg-live)").last
        expect(answer).to_contain_text("The network converged", timeout=60_000)
        expect(answer.locator(".tool-card").first).to_have_attribute("data-state", "done")
        _each_figure_once(page, answer)

        page.reload()
        answer = page.locator(".msg-assistant:not(.msg-live)").last
        expect(answer).to_contain_text("The network converged")
        _each_figure_once(page, answer)
