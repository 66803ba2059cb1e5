"""Two tabs on one session, headless (issue 11): a tab that opens a session follows its live run.

The real Reflex event processor with two tab tokens, a real runtime (SQLite, in-memory
checkpointer) and the scripted model streaming a 200-word answer one word every 10 ms.
The websocket is replaced by a recorder of the scripts each tab is sent, so the text a
tab's browser would show is computed from them (``browser_text``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from reflex.istate.manager.memory import StateManagerMemory
from reflex_base.event.processor import BaseStateEventProcessor

from tests.headless import HeadlessTab, served_runtime
from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.state.chat_harness import Browser, browser_text
from ventapp.agent import resume
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import load_settings
from ventapp.db import chat_store
from ventapp.db.models import ExecutionRun
from ventapp.state.chat_state import ChatState

USER = "Ann"


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedServer]:
    with ScriptedServer(delay_ms=10) as server:
        yield server


@contextlib.asynccontextmanager
async def open_runtime(data_dir: Path, llm: ScriptedServer, **env: str) -> AsyncIterator[AgentRuntime]:
    """The process runtime on ``llm`` (SQLite in ``data_dir``, in-memory checkpointer), installed
    for the UI while it is open; ``env`` adds settings (e.g. ``HITL_TOOLS``)."""
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "DATA_DIR": str(data_dir),
            "CHECKPOINTER": "memory",
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "x",
            "MODEL_NAME": "scripted-demo",
            "MODEL_MAX_RETRIES": "0",
            "BILLING_ALLOW_UNPRICED": "1",
            **env,
        }
    )
    async with served_runtime(settings) as opened:
        yield opened


@pytest.fixture
async def runtime(tmp_path: Path, llm: ScriptedServer) -> AsyncIterator[AgentRuntime]:
    async with open_runtime(tmp_path, llm) as opened:
        yield opened


class Tab(HeadlessTab[ChatState]):
    """One tab of the chat page; ``browser`` records what it is sent."""

    page_state = ChatState

    def __init__(self, processor: BaseStateEventProcessor, browser: Browser) -> None:
        super().__init__(processor)
        self.browser = browser

    async def shown_text(self) -> str:
        return browser_text(self.browser.scripts.get(self.token, []), (await self.state()).live_id)


@contextlib.asynccontextmanager
async def two_tabs() -> AsyncIterator[tuple[Tab, Tab]]:
    """Two tabs of one browser, both named ``USER``."""
    browser = Browser()
    processor = BaseStateEventProcessor().configure(
        state_manager=StateManagerMemory(),
        event_namespace=browser,  # type: ignore[arg-type]  # only emit_update is used
    )
    async with processor:
        a, b = Tab(processor, browser), Tab(processor, browser)
        for tab in (a, b):
            await tab.fire("save_user_name", form_data={"user_name": USER})
        yield a, b


@pytest.fixture
async def tabs(runtime: AgentRuntime) -> AsyncIterator[tuple[Tab, Tab]]:
    async with two_tabs() as pair:
        yield pair


async def until(condition: Callable[[], Any], timeout_s: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while asyncio.get_running_loop().time() < deadline:
        if await condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


async def send_and_wait_mid_answer(
    a: Tab, message: str = "long answer please"
) -> tuple[asyncio.Task[list[Any]], str]:
    """Tab A sends; returns (its task, the session id) once some of the answer has streamed."""
    earlier = (await a.state()).live_id
    sending = asyncio.create_task(a.fire("send", form_data={"message": message}))

    async def streaming() -> bool:
        state = await a.state()
        return state.live_id != earlier and state.is_streaming and len(await a.shown_text()) > 20

    await until(streaming)
    return sending, (await a.state()).session_id


def transcript(state: ChatState) -> list[tuple[str, str, str]]:
    return [(m.role, m.content, m.status) for m in state.messages]


async def test_a_second_tab_opening_the_session_follows_the_live_answer_to_the_same_end(
    tabs: tuple[Tab, Tab],
) -> None:
    a, b = tabs
    sending, session_id = await send_and_wait_mid_answer(a)

    opening = asyncio.create_task(b.fire("open_session", session_id=session_id))

    async def b_follows() -> bool:
        state = await b.state()
        return state.is_streaming and len(await b.shown_text()) > 0

    await until(b_follows)
    assert long_answer().startswith(await b.shown_text()), "B shows the answer so far, then the rest"
    await asyncio.gather(sending, opening)

    state_a, state_b = await a.state(), await b.state()
    assert not state_b.is_streaming and state_b.session_id == session_id
    assert (
        transcript(state_a)
        == transcript(state_b)
        == [
            ("user", "long answer please", "done"),
            ("assistant", long_answer(), "done"),
        ]
    )


async def test_stop_in_the_following_tab_stops_the_run_for_both(tabs: tuple[Tab, Tab]) -> None:
    a, b = tabs
    sending, session_id = await send_and_wait_mid_answer(a)
    opening = asyncio.create_task(b.fire("open_session", session_id=session_id))

    async def b_streams() -> bool:
        return (await b.state()).is_streaming

    await until(b_streams)
    await b.fire("stop")
    await asyncio.gather(sending, opening)

    for tab in (a, b):
        answer = (await tab.state()).messages[-1]
        assert answer.status == "stopped" and len(answer.content) < len(long_answer())
    assert transcript(await a.state()) == transcript(await b.state())


async def test_sending_from_a_stale_tab_says_the_session_answers_elsewhere_and_offers_to_follow(
    tabs: tuple[Tab, Tab], runtime: AgentRuntime
) -> None:
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id
    await b.fire("open_session", session_id=session_id)  # B shows the session, idle
    sending, _ = await send_and_wait_mid_answer(a)

    refused = asyncio.create_task(b.fire("send", form_data={"message": "me too"}))  # waits for A's end

    async def b_refused() -> bool:
        return (await b.state()).live_elsewhere

    await until(b_refused)
    state = await b.state()
    assert not state.is_streaming and not state.elsewhere_ended
    assert [m.content for m in state.messages if m.role == "user"] == ["hello"], "not sent, not shown as sent"
    assert not any(m.status == "error" for m in state.messages)

    await b.fire("follow_elsewhere")
    await asyncio.gather(sending, refused)
    state = await b.state()
    assert state.live_elsewhere and state.elsewhere_ended, (
        "tester: it ended, and nothing said the text can go now"
    )
    assert transcript(state) == transcript(await a.state())


async def test_a_message_added_elsewhere_shows_when_the_open_session_is_opened_again(
    tabs: tuple[Tab, Tab], runtime: AgentRuntime
) -> None:
    a, _ = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id
    chat_store.add_message(runtime.engine, session_id, "user", "added by another client")

    await a.fire("open_session", session_id=session_id)  # the sidebar click on the open session

    assert (await a.state()).messages[-1].content == "added by another client"

    chat_store.add_message(runtime.engine, session_id, "user", "and another one")
    await a.fire("load_page")  # a reload: the tab's state still has the session and its messages

    assert (await a.state()).messages[-1].content == "and another one"


async def test_a_reload_while_streaming_gets_the_text_so_far_in_one_put(tabs: tuple[Tab, Tab]) -> None:
    a, _ = tabs
    sending, _ = await send_and_wait_mid_answer(a)
    before = len(a.browser.scripts[a.token])

    await a.fire("load_page")

    puts = [script for script in a.browser.scripts[a.token][before:] if ".put(" in script]
    assert puts, "the reloaded page is sent the whole text once"
    await sending
    assert (await a.state()).messages[-1].content == long_answer()


async def test_a_message_where_nothing_waits_does_not_read_the_checkpoint(
    tabs: tuple[Tab, Tab], runtime: AgentRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hot path: the ask-before-drop check reads the graph checkpoint only when a pause may wait."""
    reads: list[str] = []
    real_pending = resume._pending

    async def pending(opened: AgentRuntime, session_id: str) -> Any:
        reads.append(session_id)
        return await real_pending(opened, session_id)

    monkeypatch.setattr(resume, "_pending", pending)
    a, _ = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id

    await a.fire("send", form_data={"message": "hello again"})

    assert reads == [], "no stored pause: the checkpoint is not read"
    assert [m.content for m in (await a.state()).messages if m.role == "user"] == ["hello", "hello again"]

    with runtime.engine.begin() as connection:  # as a run that paused leaves it
        runs = ExecutionRun.__table__
        connection.execute(
            sa.update(runs).where(runs.c.session_id == session_id).values(status="waiting_input")
        )
    await a.fire("send", form_data={"message": "and again"})

    assert reads == [session_id], "a stored pause: the checkpoint says whether it still waits"
    assert (await a.state()).messages[-2].content == "and again", "nothing waited there: sent at once"


async def test_a_reread_answer_shows_the_reasoning_the_live_one_showed(
    tabs: tuple[Tab, Tab], llm: ScriptedServer
) -> None:
    """The reasoning block of a finished answer was gone after a reload or in another tab."""
    a, b = tabs
    llm.push(
        {
            "tool_calls": [{"name": "calculate", "arguments": {"expression": "12*8*3"}}],
            "reasoning": "Use it.",
        },
        {"content": "It is 288.", "reasoning": long_answer(60)},
    )
    await a.fire("send", form_data={"message": "calculate 12*8*3, think first"})
    state = await a.state()
    live = browser_text(a.browser.scripts[a.token], state.live_id, "livereasoning")
    assert live == "Use it.\n\n" + long_answer(60), "a paragraph per model call, live"
    assert state.messages[-1].reasoning == live

    await b.fire("open_session", session_id=state.session_id)  # read from the database
    await a.fire("load_page")  # a reload
    for tab in (a, b):
        answer = (await tab.state()).messages[-1]
        assert (answer.role, answer.content, answer.reasoning) == ("assistant", "It is 288.", live)
