"""Granian hears of a stop signal only once the tabs were sent their stopped answers
(``ventapp.server_signals``), with a real SIGTERM. Granian's ``WorkerSignal`` shows nothing of being set
(its callbacks run when its Rust worker ends), so it is stood in for by one that records."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from granian import _signals

from ventapp import server_signals


@pytest.fixture
def no_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_signals, "SOCKET_FLUSH_S", 0.0)


class Told:
    """Granian's ``WorkerSignal``: ``set()`` tells the worker to stop."""

    def __init__(self, told: list[str]) -> None:
        self.told = told

    def set(self) -> None:
        self.told.append("server")


def granian_like(told: list[str]):  # type: ignore[no-untyped-def]  # a set_loop_signals
    """Granian's ``set_loop_signals`` as it is, with the recording signal."""

    def set_loop_signals(loop: asyncio.AbstractEventLoop) -> Told:
        event = Told(told)
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, lambda *_: event.set(), signum, None)
        return event

    return set_loop_signals


async def _wait(told: list[str], timeout_s: float = 5.0) -> None:
    for _ in range(int(timeout_s / 0.02)):
        if told:
            return
        await asyncio.sleep(0.02)


@pytest.mark.usefixtures("no_flush")
async def test_the_server_hears_of_sigterm_once_the_runs_are_settled() -> None:
    """Tester: at SIGTERM a tab showed only the lost connection, never the shutdown sentence: Granian
    dropped the event socket the moment it handled the signal, before the sentence was sent."""
    loop = asyncio.get_running_loop()
    order: list[str] = []

    async def settle() -> None:
        order.append("settling")
        os.kill(os.getpid(), signal.SIGTERM)  # the supervisor's own SIGTERM to its worker meanwhile
        await asyncio.sleep(0.3)
        order.append("settled")

    told: list[str] = []
    try:
        server_signals.held(granian_like(told))(loop)  # as a Granian worker starts
        with server_signals.holding(settle):
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(0.1)
            assert told == [] and order == ["settling"], "Granian heard before the runs were settled"
            await _wait(told)
        assert order == ["settling", "settled"] and told == ["server"]
    finally:
        for signum in server_signals.HELD_SIGNALS:
            loop.remove_signal_handler(signum)


async def test_without_a_holder_the_server_hears_at_once() -> None:
    loop = asyncio.get_running_loop()
    told: list[str] = []
    try:
        server_signals.held(granian_like(told))(loop)
        os.kill(os.getpid(), signal.SIGTERM)
        await _wait(told)
        assert told == ["server"]
    finally:
        for signum in server_signals.HELD_SIGNALS:
            loop.remove_signal_handler(signum)


def test_install_wraps_granians_function_once() -> None:
    original = _signals.set_loop_signals
    try:
        assert server_signals.install() and server_signals.install()
        wrapped = _signals.set_loop_signals
        assert getattr(wrapped, "ventagent_held", False) and wrapped is not original
    finally:
        _signals.set_loop_signals = original
