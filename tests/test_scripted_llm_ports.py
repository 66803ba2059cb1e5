"""A scripted server never serves on a port an earlier one of this process served on.

The flake it prevents (``test_a_tick_missed_while_down_runs_once_within_the_grace``, once in a full
run): langchain-openai caches its async httpx client per ``base_url`` for the life of the process,
and pytest-asyncio closes each test's event loop. When the OS handed a later test's server the port
an earlier test's server had, the later test reached its model through the earlier client, whose
pooled connection belonged to the closed loop: the run failed with "Event loop is closed".
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from tests.scripted_llm import ScriptedServer


def _os_hands_out_again(monkeypatch: pytest.MonkeyPatch, port: int) -> None:
    """The next bind to port 0 gets ``port``, as the OS does now and then once a port is free."""
    real_bind = socket.socket.bind
    pending = [port]

    def bind(sock: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[1] == 0 and pending:
            address = (address[0], pending.pop())
        real_bind(sock, address)

    monkeypatch.setattr(socket.socket, "bind", bind)


def _answer(base_url: str) -> str:
    """One streamed answer through langchain-openai's cached client, on an event loop of its own."""

    async def ask() -> str:
        model = ChatOpenAI(base_url=base_url, api_key="x", model="scripted-demo", max_retries=0)
        return str((await model.ainvoke("hello")).content)

    return asyncio.run(ask())


def test_a_port_the_os_hands_out_again_is_not_served_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer() as first:
        earlier = first.base_url
        assert "hello" in _answer(earlier)  # leaves a pooled connection on a loop now closed
    _os_hands_out_again(monkeypatch, first.port)
    with ScriptedServer() as second:
        assert second.base_url != earlier, "a new base_url, so a new client on the new loop"
        assert "hello" in _answer(second.base_url)
