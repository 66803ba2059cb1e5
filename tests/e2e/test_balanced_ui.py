"""The UI through a round-robin proxy in front of two processes on PostgreSQL + Redis (issue 14).

The proxy is Debian's nginx running the README's example block ("Several processes") with its
ports and folder filled in, so this also proves the example. It listens on the port the shared
UI build was made for (``tests/e2e/reflex_app.py``): the build bakes in its backend's address,
which must be the balancer's. Both processes are ``reflex run --env prod --backend-only`` with one
Granian worker each; nginx serves the exported UI from the build folder.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.browser import open_chat
from tests.e2e.reflex_app import ReflexApp, can_bind
from tests.scale.processes import scale_env
from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.servers import NginxServer, available
from tests.support import app_env
from ventapp.config import PROJECT_ROOT

TIMEOUT_MS = 30_000
README_BLOCK = re.compile(r"```nginx\n(.*?)```", re.S)


def readme_nginx(port: int, backends: list[int], ui_dir: str) -> str:
    """The README's nginx example with this test's ports and UI folder (each placeholder found once)."""
    blocks = [
        b for b in README_BLOCK.findall((PROJECT_ROOT / "README.md").read_text()) if "upstream ventagent" in b
    ]
    assert len(blocks) == 1, "one load-balancer example in the README"
    text = blocks[0]
    servers = " ".join(f"server 127.0.0.1:{backend};" for backend in backends)
    for placeholder, value in (
        ("server 127.0.0.1:8001; server 127.0.0.1:8002;", servers),
        ("listen 80;", f"listen 127.0.0.1:{port};"),
        ("root /srv/ventagent/ui;", f"root {ui_dir};"),
    ):
        assert text.count(placeholder) == 1, f"the README's example has {placeholder!r}"
        text = text.replace(placeholder, value)
    return text


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedServer]:
    """One word every 20 ms: a 600-word answer streams for about twelve seconds."""
    with ScriptedServer(delay_ms=20) as server:
        yield server


@pytest.fixture(scope="module")
def balancer(
    llm: ScriptedServer, postgres_server: Any, redis_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, NginxServer, list[ReflexApp]]]:
    """nginx on the shared UI port in front of two backend processes: its URL, itself, the processes."""
    if not available("nginx"):
        pytest.fail("nginx is not installed: run `make servers` (Debian packages, see the Makefile)")
    folder = tmp_path_factory.mktemp("balanced")
    # The shared production UI (built now unless an earlier module of this run did); only its files are used.
    with ReflexApp(app_env(folder / "ui-data", llm.base_url), folder / "ui.log") as ui:
        port = ui.port  # the port baked into the build: nginx must listen on this one, no other
    # The UI app's Granian worker may hold the port a moment after the app's main process exits.
    deadline = time.monotonic() + 60
    while not can_bind(port):
        if time.monotonic() > deadline:
            pytest.fail(f"port {port}, which the UI build was made for, is still taken after 60 s")
        time.sleep(0.2)
    database_url = postgres_server.create_database()
    backends = []
    try:
        for name in ("a", "b"):
            env = {
                **scale_env(folder / f"data-{name}", llm.base_url, database_url, redis_server.url),
                "GRANIAN_WORKERS": "1",
            }
            backends.append(ReflexApp(env, folder / f"{name}.log", backend_only=True).__enter__())
        # nginx runs as `nobody` under root, and a checkout may sit in a folder only its owner can
        # enter (`mktemp -d` makes 0700): serve a copy from a folder anyone may read, as a
        # deployment's UI_DIR (`make ui-export`) would be.
        ui_dir = Path(tempfile.mkdtemp(prefix="vent-ui-", dir="/tmp"))
        ui_dir.chmod(0o755)
        shutil.copytree(PROJECT_ROOT / ".web" / "build" / "client", ui_dir / "client")
        for path in ui_dir.rglob("*"):  # whatever the umask the build ran under
            path.chmod(0o755 if path.is_dir() else 0o644)
        site = readme_nginx(port, [app.port for app in backends], str(ui_dir / "client"))
        nginx = NginxServer(site, port).start()
        try:
            yield f"http://127.0.0.1:{port}", nginx, backends
        finally:
            nginx.stop()
            shutil.rmtree(ui_dir, ignore_errors=True)
    finally:
        for app in backends:
            app.stop()


def test_chat_reload_and_stop_through_a_round_robin_proxy(
    browser: Browser, balancer: tuple[str, NginxServer, list[ReflexApp]], llm: ScriptedServer
) -> None:
    url, nginx, backends = balancer
    llm.reset()
    llm.push({"content": long_answer(12)})
    page = open_chat(browser, url, "balanced-e2e", TIMEOUT_MS)
    page.fill("#chat-input", "hello through the balancer")
    page.click("#send")
    answer = page.locator(".msg-assistant:not(.msg-live) .md-body").last
    expect(answer).to_have_text(long_answer(12))
    expect(page).to_have_url(re.compile(r"[?&]session=[0-9a-f-]{36}"))

    page.reload()  # a new websocket: the other process (round robin; the UI's only backend requests)
    expect(page.locator(".msg-user")).to_have_text(["hello through the balancer"])
    expect(page.locator(".msg-assistant .md-body").last).to_have_text(long_answer(12))

    llm.push({"content": long_answer(600)})
    page.fill("#chat-input", "long answer please")
    page.click("#send")
    expect(page.locator(".msg-live")).to_have_attribute("data-state", "streaming")
    expect(page.locator(".msg-live .md-body")).to_contain_text("Ventilation systems move fresh air")
    page.click("#stop")
    expect(page.locator(".msg-assistant:not(.msg-live)").last.locator(".stopped-note")).to_be_visible()
    expect(page.locator("#send")).to_be_visible()
    page.context.close()
    sockets: list[str] = []
    deadline = time.monotonic() + 15
    while len(sockets) < 2 and time.monotonic() < deadline:  # nginx logs a websocket when it closes
        time.sleep(0.2)
        sockets = [
            line.split()[-1] for line in nginx.access_log.splitlines() if line.split()[1] == "/_event/"
        ]
    expected = {f"127.0.0.1:{app.port}" for app in backends}
    assert len(sockets) == 2 and set(sockets) == expected, "the chat on one process, the reload on the other"
