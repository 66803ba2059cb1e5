"""Websocket bytes per token of the Reflex UI while an answer streams (issue 18 item 1).

Starts the whole app (``reflex run --env prod``, single port) against the scripted model,
opens the chat in Debian's Chromium through Playwright and counts the bytes of every
websocket frame the browser receives (and sends) from the click on Send until the
finished answer is on screen. The answer is N words, which the scripted model streams as
N chunks (N ``token`` frames): the figure is bytes / N, for N = 200, 2,000 and 10,000 by
default. The target: the 10,000-token figure within 1.5x of the 200-token one (bytes
constant per token, not growing with the answer's length). The reasoning case does the same
for a model that reasons first: N words of reasoning (N ``thinking_token`` frames, shown in
the collapsible reasoning block) before a one-line answer, for N = 200 and 2,000.

Run: ``.venv/bin/python -m bench.bench_ws_bytes [--tokens 200,2000,10000] [--reasoning 200,2000]
[--delay-ms 0]`` (an empty list skips its case).
``--delay-ms`` paces the model (5 ms = 200 tokens/s, a fast real model). Everything runs
on 127.0.0.1; a first run builds the UI (minutes), later ones reuse ``.web``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, WebSocket, expect

from tests.e2e.browser import chromium
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 600_000


class Counter:
    """Bytes of websocket frames in each direction, while ``on`` is set."""

    def __init__(self) -> None:
        self.on = False
        self.received = 0
        self.sent = 0
        self.frames = 0

    def attach(self, socket: WebSocket) -> None:
        socket.on("framereceived", self._received)
        socket.on("framesent", self._sent)

    @staticmethod
    def _size(payload: Any) -> int:
        return len(payload.encode()) if isinstance(payload, str) else len(payload)

    def _received(self, payload: Any) -> None:
        if self.on:
            self.received += self._size(payload)
            self.frames += 1

    def _sent(self, payload: Any) -> None:
        if self.on:
            self.sent += self._size(payload)


def _measure(
    page: Page, counter: Counter, llm: ScriptedServer, words: int, reasoning: bool
) -> tuple[int, int, int, float]:
    answers = page.locator(".msg-assistant:not(.msg-live)")
    before = answers.count()
    reply = (
        {"content": "Done.", "reasoning": long_answer(words)}
        if reasoning
        else {"content": long_answer(words)}
    )
    llm.push(reply)
    page.fill("#chat-input", f"answer with {words} words")
    counter.received = counter.sent = counter.frames = 0
    counter.on = True
    started = time.perf_counter()
    page.click("#send")
    expect(answers).to_have_count(before + 1, timeout=TIMEOUT_MS)
    expect(page.locator("#send")).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_timeout(300)  # the last frames after the answer (sidebar, refresh)
    counter.on = False
    return counter.received, counter.sent, counter.frames, time.perf_counter() - started


def main(sizes: list[int], reasoning_sizes: list[int], delay_ms: int) -> None:
    """Measure each answer (then reasoning) size in a new chat and print bytes per token."""
    cases = [("answer", words) for words in sizes] + [("reasoning", words) for words in reasoning_sizes]
    with (
        tempfile.TemporaryDirectory() as data,
        ScriptedServer(delay_ms=delay_ms) as llm,
        ReflexApp({**app_env(Path(data), llm.base_url), "DEMO_MODE": "1"}, Path(data) / "app.log") as app,
        chromium() as browser,
    ):
        print(f"scripted model delay {delay_ms} ms per token; app {app.url}")
        print(
            f"{'case':>9} {'tokens':>7} {'received B':>11} {'B/token':>8} {'sent B':>8} {'frames':>7} {'seconds':>8}"
        )
        first: dict[str, float] = {}
        for kind, words in cases:
            counter = Counter()
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.on("websocket", counter.attach)
            page.goto(app.url)
            page.locator("#user-name").fill(f"bytes-{kind}-{words}")
            page.click("#user-name-save")
            expect(page.locator("#user-chip")).to_contain_text(f"bytes-{kind}-{words}")
            received, sent, frames, seconds = _measure(page, counter, llm, words, kind == "reasoning")
            per_token = received / words
            base = first.setdefault(kind, per_token)
            print(
                f"{kind:>9} {words:>7} {received:>11,} {per_token:>8.1f} {sent:>8,} {frames:>7} {seconds:>8.1f}"
                f"   ({per_token / base:.2f}x the first {kind} size)"
            )
            page.context.close()


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="200,2000,10000", help="comma-separated answer sizes in tokens")
    parser.add_argument(
        "--reasoning",
        default="200,2000",
        help="comma-separated reasoning sizes in tokens (before a short answer)",
    )
    parser.add_argument("--delay-ms", type=int, default=0, help="pause of the scripted model between tokens")
    args = parser.parse_args()
    main(_sizes(args.tokens), _sizes(args.reasoning), args.delay_ms)
