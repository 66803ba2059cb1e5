"""The browser tests' app runner: one port for every UI app, so one UI build serves the session (CI time)."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.e2e import reflex_app
from tests.e2e.reflex_app import ReflexApp


def test_ui_apps_share_one_port(tmp_path: Path) -> None:
    first = ReflexApp({}, tmp_path / "a.log")
    second = ReflexApp({}, tmp_path / "b.log")
    assert first.port == second.port, "the port is baked into the UI bundle: one build for all"
    assert ReflexApp({}, tmp_path / "c.log", backend_only=True).port != first.port


def test_a_taken_shared_port_is_replaced_by_a_free_one(tmp_path: Path) -> None:
    shared = ReflexApp({}, tmp_path / "a.log").port
    with socket.socket() as squatter:
        # The apps before this test served on that port: its last connections may linger in
        # TIME_WAIT, which only a plain bind refuses (the app's server binds with SO_REUSEADDR).
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", shared))
        squatter.listen()
        moved = ReflexApp({}, tmp_path / "b.log").port
    assert moved != shared
    assert reflex_app.ui_port() == moved, "kept for the next apps"
