"""What another tab did to the open session, shown when this tab touches it (tester's F2, F3).

Two tabs of one user on one session, headless, with the real runtime and the scripted model
(the fixtures of ``test_live_follow``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.state.test_live_follow import (  # noqa: F401  # llm, runtime and tabs are fixtures
    Tab,
    llm,
    open_runtime,
    runtime,
    send_and_wait_mid_answer,
    tabs,
    transcript,
    two_tabs,
    until,
)
from ventapp.state import other_tabs, server_view, turns


def _counted_reads(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[str]:
    """The session ids ``module.load_session`` reads from now on (it still reads them)."""
    reads: list[str] = []
    real_load = module.load_session

    async def load_session(session_id: str, user_name: str, lang: str = "zh-CN") -> Any:
        reads.append(session_id)
        return await real_load(session_id, user_name, lang)

    monkeypatch.setattr(module, "load_session", load_session)
    return reads


async def test_the_elsewhere_notice_says_when_that_answer_ended_and_the_tab_shows_it(
    tabs: tuple[Tab, Tab],  # noqa: F811
) -> None:
    """F2: the notice kept saying "still answering" after the other run had ended."""
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id
    await b.fire("open_session", session_id=session_id)
    sending, _ = await send_and_wait_mid_answer(a)
    refused = asyncio.create_task(b.fire("send", form_data={"message": "me too"}))

    async def b_refused() -> bool:
        return (await b.state()).live_elsewhere

    await until(b_refused)
    assert not (await b.state()).elsewhere_ended, "A still answers"
    await sending

    async def b_knows_it_ended() -> bool:
        return (await b.state()).elsewhere_ended

    await until(b_knows_it_ended)
    await refused
    state = await b.state()
    assert state.live_elsewhere and not state.is_streaming, "the notice stays, saying it can be sent now"
    assert transcript(state) == transcript(await a.state()), "A's finished turn is shown without a reload"
    assert state.messages[-1].content == long_answer()

    await b.fire("send", form_data={"message": "me too"})
    state = await b.state()
    assert not state.live_elsewhere and not state.elsewhere_ended, "sent: the notice goes"
    assert [m.content for m in state.messages if m.role == "user"] == [
        "hello",
        "long answer please",
        "me too",
    ]


async def test_sending_shows_the_turns_another_tab_finished_before_this_message(
    tabs: tuple[Tab, Tab],  # noqa: F811
) -> None:
    """F3: a tab never showed turns finished in another tab, even after it sent."""
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id
    await b.fire("open_session", session_id=session_id)  # B shows the session, idle
    await a.fire("send", form_data={"message": "from tab A"})  # finished while B looked elsewhere

    await b.fire("send", form_data={"message": "from tab B"})

    state_a, state_b = await a.state(), await b.state()
    users = [m.content for m in state_b.messages if m.role == "user"]
    assert users == ["hello", "from tab A", "from tab B"], "the server's order, A's turn included"
    assert len(state_b.messages) == 6 and state_b.messages[-1].status == "done"
    await a.fire("open_session", session_id=session_id)  # a reload of A shows the server's transcript
    assert transcript(await b.state()) == transcript(await a.state()), state_a.messages


async def test_a_send_with_nothing_changed_elsewhere_does_not_read_the_transcript_again(
    tabs: tuple[Tab, Tab],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check is one small read per message; the transcript is read again only when it changed."""
    reads = _counted_reads(monkeypatch, other_tabs)
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    await a.fire("send", form_data={"message": "hello again"})
    await a.fire("send", form_data={"message": "and again"})
    assert reads == [], "this tab's own turns are not news to it"

    session_id = (await a.state()).session_id
    await b.fire("open_session", session_id=session_id)
    await b.fire("send", form_data={"message": "from B"})
    await a.fire("send", form_data={"message": "A again"})
    assert reads == [session_id], "B's turn is news to A: read once"


async def test_the_focus_coming_back_shows_turns_finished_elsewhere_and_nothing_else(
    tabs: tuple[Tab, Tab],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """F3: switching back to a tab shows what another tab finished meanwhile; a focus alone reads nothing more."""
    reads = _counted_reads(monkeypatch, server_view)  # the re-read's
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id
    await b.fire("open_session", session_id=session_id)
    await b.fire("catch_up_on_focus")
    assert reads == [], "nothing changed: the transcript is not read again"

    await a.fire("send", form_data={"message": "from tab A"})
    await b.fire("catch_up_on_focus")

    assert reads == [session_id]
    assert transcript(await b.state()) == transcript(await a.state()) != []
    await b.fire("catch_up_on_focus")
    assert reads == [session_id], "shown: the next focus reads nothing more"


async def test_an_edit_refused_while_another_tab_answers_says_too_when_that_answer_ended(
    tabs: tuple[Tab, Tab],  # noqa: F811
) -> None:
    """F2 for an edit: its notice changed neither; the edit box keeps the text throughout."""
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id
    await b.fire("open_session", session_id=session_id)
    first = (await b.state()).messages[0].id
    sending, _ = await send_and_wait_mid_answer(a)
    await b.fire("start_edit", message_id=first)
    refused = asyncio.create_task(b.fire("send_edit", form_data={"edited": "hello, edited"}))

    async def b_refused() -> bool:
        state = await b.state()
        return state.live_elsewhere and state.editing_id == first

    await until(b_refused)
    await sending

    async def b_knows_it_ended() -> bool:
        return (await b.state()).elsewhere_ended

    await until(b_knows_it_ended)
    await refused
    state = await b.state()
    assert transcript(state) == transcript(await a.state())
    assert (state.editing_id, state.edit_draft) == (first, "hello, edited"), "the edit waits in its box"


@pytest.fixture
async def card_tabs(tmp_path: Path, llm: ScriptedServer) -> AsyncIterator[tuple[Tab, Tab]]:  # noqa: F811
    """Two tabs of one user; the calculator asks for approval (``HITL_TOOLS=calculate``)."""
    async with open_runtime(tmp_path, llm, HITL_TOOLS="calculate"), two_tabs() as pair:
        yield pair


async def test_a_card_answered_in_another_tab_gives_way_when_the_focus_comes_back(
    card_tabs: tuple[Tab, Tab], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tester: tab B kept showing a card tab A had approved, focus after focus, until B clicked it."""
    checkpoint_reads: list[str] = []
    real_load = turns.load_interrupt

    async def load_interrupt(session_id: str, user_name: str) -> Any:
        checkpoint_reads.append(session_id)
        return await real_load(session_id, user_name)

    monkeypatch.setattr(turns, "load_interrupt", load_interrupt)
    a, b = card_tabs
    await a.fire("send", form_data={"message": "计算 2+3"})
    session_id = (await a.state()).session_id
    assert (await a.state()).interrupt.kind == "tool_approval"
    await b.fire("open_session", session_id=session_id)
    card = (await b.state()).interrupt
    assert card.kind == "tool_approval"
    await b.fire("toggle_call", index=0, mode="reject")  # B starts answering: kept while the card waits
    kept = (await b.state()).interrupt
    checkpoint_reads.clear()
    await b.fire("catch_up_on_focus")
    assert (await b.state()).interrupt == kept, "nothing changed: the card and its answer stay"
    assert checkpoint_reads == [], "a focus with nothing changed reads only the mark"

    await a.fire("submit_approval", form_data={})
    state_a = await a.state()
    assert state_a.interrupt.kind == "" and state_a.messages[-1].status == "done"

    await b.fire("catch_up_on_focus")

    state_b = await b.state()
    assert state_b.interrupt.kind == "", "the server has no card: none is shown"
    assert transcript(state_b) == transcript(state_a), "the session as the server has it, A's answer included"
    assert state_b.refused_note == "这个对话中已没有等待答复的请求。"
    checkpoint_reads.clear()
    await b.fire("catch_up_on_focus")
    assert checkpoint_reads == [], "shown: the next focus reads nothing more"


async def test_a_card_answered_in_another_tab_is_no_longer_announced_as_waiting(
    card_tabs: tuple[Tab, Tab],
) -> None:
    """Tester: tab 1's card gave way, but its aria-live region still said "智能体在等你决定。",
    after a reload too."""
    a, b = card_tabs
    await a.fire("send", form_data={"message": "计算 3*4 m³/s"})
    assert (await a.state()).announcement == "智能体在等你决定。"
    await b.fire("open_session", session_id=(await a.state()).session_id)
    await b.fire("submit_approval", form_data={})
    assert (await b.state()).announcement == "回答已完成。"

    await a.fire("catch_up_on_focus")

    state = await a.state()
    assert state.interrupt.kind == "" and state.refused_note == "这个对话中已没有等待答复的请求。"
    assert state.announcement == "", "nothing waits for the person any more"
    await a.fire("load_page")  # a reload
    assert (await a.state()).announcement == ""


async def test_a_card_still_waiting_is_still_announced_after_a_reread(
    card_tabs: tuple[Tab, Tab],
) -> None:
    a, _ = card_tabs
    await a.fire("send", form_data={"message": "计算 3*4"})
    await a.fire("relocalise", lang="en")  # the session is read again, its card with it
    state = await a.state()
    assert state.interrupt.kind == "tool_approval"
    assert state.announcement == "The agent is waiting for your decision.", "said again, in English now"


async def test_after_follow_the_notice_comes_back_when_that_answer_ends(tabs: tuple[Tab, Tab]) -> None:  # noqa: F811
    """Tester: after "Follow the answer" the notice just went when that answer ended (text still in the box)."""
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    await b.fire("open_session", session_id=(await a.state()).session_id)
    sending, _ = await send_and_wait_mid_answer(a)
    refused = asyncio.create_task(b.fire("send", form_data={"message": "me too"}))

    async def b_refused() -> bool:
        return (await b.state()).live_elsewhere

    await until(b_refused)
    following = asyncio.create_task(b.fire("follow_elsewhere"))

    async def b_follows() -> bool:
        state = await b.state()
        return state.is_streaming and not state.live_elsewhere

    await until(b_follows)
    await asyncio.gather(sending, refused, following)
    state = await b.state()
    assert state.live_elsewhere and state.elsewhere_ended and not state.is_streaming
    assert transcript(state) == transcript(await a.state())


async def test_a_message_refused_while_the_session_answers_elsewhere_is_back_in_the_box_after_a_reload(
    tabs: tuple[Tab, Tab],  # noqa: F811
) -> None:
    """Lead (ui12): every refused message is kept in the tab for a reload, but not one refused because
    the session answered in another tab: a reload lost what was typed."""
    a, b = tabs
    await a.fire("send", form_data={"message": "hello"})
    session_id = (await a.state()).session_id
    await b.fire("open_session", session_id=session_id)
    sending, _ = await send_and_wait_mid_answer(a)
    refused = asyncio.create_task(b.fire("send", form_data={"message": "me too"}))

    async def b_refused() -> bool:
        return (await b.state()).live_elsewhere

    await until(b_refused)
    kept = json.loads((await b.state()).unsent_kept or "{}")
    assert (kept.get("session"), kept.get("text"), kept.get("elsewhere")) == (session_id, "me too", True)
    b.browser.values.clear()

    reloading = asyncio.create_task(b.fire("load_page"))  # a reload while A still answers

    async def b_follows_that_answer() -> bool:
        return (await b.state()).is_streaming

    await until(b_follows_that_answer)  # as any reload does
    state = await b.state()
    assert not state.live_elsewhere, "the notice comes back when that answer ends"
    assert b.browser.values.get(b.token) == [("ref_chat_input", "me too")], "back in the box"
    assert not [m for m in state.messages if m.unsent], "not in the transcript, as when it was refused"
    await sending
    await reloading
    await refused

    async def b_told_it_can_be_sent() -> bool:
        state = await b.state()
        return not state.is_streaming and state.live_elsewhere and state.elsewhere_ended

    await until(b_told_it_can_be_sent)
    b.browser.values.clear()
    await b.fire("load_page")  # a reload once it ended: the box and the notice again
    state = await b.state()
    assert state.live_elsewhere and state.elsewhere_ended and not state.is_streaming
    assert b.browser.values.get(b.token) == [("ref_chat_input", "me too")]

    await b.fire("send", form_data={"message": "me too"})
    state = await b.state()
    assert not state.unsent_kept and not state.live_elsewhere, "sent: nothing kept any more"
