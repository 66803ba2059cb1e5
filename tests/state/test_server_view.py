"""Live equals reload (issue 12): after a run that the tab's live fold may show otherwise than the
stored answer, ChatState shows the stored transcript (``ventapp.state.server_view``).

Same set-up as ``test_chat_state``: the real Reflex event processor, the pipeline replaced by a fake
yielding real contract events; the stored transcript is built from rows as ``load_session`` does.
"""

from __future__ import annotations

import asyncio
import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from tests.state.chat_harness import (
    SESSION,
    USAGE,
    Client,
    tokens,
)
from ventapp.agent import events as ev
from ventapp.agent.pipeline import CANCELLED_MARKER, ChatRejected
from ventapp.state import chat_state as cs
from ventapp.state import live_bubble, server_view
from ventapp.state.live_answer import LiveAnswer
from ventapp.state.server_view import differs_from_stored
from ventapp.state.views import ChatMessageView, message_from_row


def _stored(status: str, content: str) -> Any:
    """``load_session`` over one stored question and answer (the answer's run took 1.2 s)."""
    rows = [
        SimpleNamespace(id="u", role="user", content="long answer please"),
        SimpleNamespace(
            id="a",
            role="assistant",
            content=content,
            tool_calls=[],
            citations=[],
            usage=USAGE.model_dump(mode="json"),
            status=status,
            run_id="r",
        ),
    ]
    run = SimpleNamespace(duration_ms=1200, error_code="cancelled", error="Stopped.")

    async def load_session(session_id: str, user_name: str, lang: str = "en") -> Any:
        return [message_from_row(row, lang, run if row.role == "assistant" else None) for row in rows], "full"

    return load_session


def test_only_answers_that_read_otherwise_after_a_reload_are_read_again() -> None:
    done = LiveAnswer(usage=USAGE, lang="en")
    assert differs_from_stored(done, "en") is False
    assert differs_from_stored(done, "zh-CN") is True, "the language changed while it streamed"
    assert differs_from_stored(LiveAnswer(error="x", error_code="cancelled", lang="en"), "en") is True
    assert differs_from_stored(LiveAnswer(paused=True, lang="en"), "en") is False


async def test_a_stopped_answer_shows_its_stored_footer_live(
    client: Client,
    pipeline: SimpleNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server_view, "load_session", _stored("cancelled", "Partial" + CANCELLED_MARKER))
    pipeline.events = [ev.Token(content="Partial"), ev.Error(message="Stopped.", code="cancelled")]

    await client.fire("send", form_data={"message": "long answer please"})

    answer = (await client.state()).messages[-1]
    assert (answer.status, answer.content) == ("stopped", "Partial")
    assert answer.footer.startswith("1.2 sec · 1,234 tokens (1,100 in · 134 out)"), "as after a reload"


async def test_a_language_switch_while_streaming_rewords_the_answer_when_it_ends(
    client: Client,
    pipeline: SimpleNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server_view, "load_session", _stored("complete", "w0 w1"))

    async def load_sessions(user_name: str, lang: str = "zh-CN") -> list[Any]:
        return [cs.SessionView(id="s", title=f"worded in {lang}")]

    monkeypatch.setattr(cs, "load_sessions", load_sessions)
    monkeypatch.setattr(live_bubble, "load_sessions", load_sessions)
    monkeypatch.setattr(server_view, "load_sessions", load_sessions)
    pipeline.events = [*tokens(20), ev.Done(duration_ms=1200, usage=USAGE)]
    pipeline.pause_s = 0.01

    sending = asyncio.create_task(client.fire("send", form_data={"message": "long answer please"}))
    await asyncio.sleep(0.05)
    assert (await client.state()).is_streaming is True
    await client.fire("relocalise", lang="zh-CN")
    await sending
    for _ in range(100):  # the re-read is its own event, after the run's last one
        state = await client.state()
        if state.messages and state.messages[-1].footer.startswith("1.2秒"):
            break
        await asyncio.sleep(0.02)

    assert state.messages[-1].footer.startswith("1.2秒 · 1,234 token（输入 1,100 · 输出 134）")
    assert [s.title for s in state.sessions] == ["worded in zh-CN"], "the list too"


async def test_the_live_region_says_its_sentence_again_in_the_language_switched_to(
    client: Client,
    pipeline: SimpleNamespace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tester: after 中文 → English the ``#announcer`` region still said "回答已完成。"."""
    monkeypatch.setattr(server_view, "load_session", _stored("complete", "w0"))
    pipeline.events = [*tokens(1), ev.Done(duration_ms=1200, usage=USAGE)]
    await client.fire("send", form_data={"message": "long answer please"})
    assert (await client.state()).announcement == "The answer is complete."

    await client.fire("relocalise", lang="zh-CN")
    assert (await client.state()).announcement == "回答已完成。"
    await client.fire("relocalise", lang="en")
    assert (await client.state()).announcement == "The answer is complete."

    pipeline.events = [ev.Error(message="boom", code="internal")]
    await client.fire("send", form_data={"message": "again"})
    failed = (await client.state()).announcement
    await client.fire("relocalise", lang="zh-CN")
    assert failed.startswith("The answer failed: ")
    assert (await client.state()).announcement.startswith("回答失败："), "the failure worded anew too"


TURNS = [
    ChatMessageView(id="u1", role="user", content="hello", attachments=["/workspace/uploads/a.csv"]),
    ChatMessageView(id="a1", role="assistant", content="Hi!", status="done"),
    ChatMessageView(id="u2", role="user", content="what is a fan curve?"),
    ChatMessageView(id="a2", role="assistant", content="A fan curve is …", status="done"),
]
QUOTA_NOTE = (
    "Nothing was sent: You have used today's token allowance. It resets at midnight (Beijing time). "
    "The conversation is as it was."
)


@pytest.fixture
def stored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session as the server keeps it, for opening and re-reading it alike."""

    async def load_session(session_id: str, user_name: str, lang: str = "en") -> Any:
        return [dataclasses.replace(m) for m in TURNS], "full"

    monkeypatch.setattr(cs, "load_session", load_session)
    monkeypatch.setattr(server_view, "load_session", load_session)


async def test_a_refused_edit_shows_the_transcript_again_and_its_text_in_the_box(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    stored: None,
) -> None:
    """Tester: the edited turn and what followed stayed removed until a reload."""
    await client.fire("open_session", session_id=SESSION)
    await client.fire("start_edit", message_id="u1")
    pipeline.reject = ChatRejected(429, "quota", "Daily token quota exhausted.")

    await client.fire("send_edit", form_data={"edited": "hello there"})

    state = await client.state()
    assert [(m.id, m.status, m.unsent) for m in state.messages] == [(m.id, m.status, False) for m in TURNS], (
        "as the server has it: no cut, no unsent copy, no failed answer"
    )
    assert state.refused_note == QUOTA_NOTE and not state.is_streaming
    assert (state.editing_id, state.edit_draft) == ("u1", "hello there"), "the edit box is open with the text"
    assert state.edit_attachments == ["/workspace/uploads/a.csv"]
    assert ("ref_chat_input", "hello there") not in client.browser.values.get(client.token, [])

    pipeline.reject = None
    pipeline.events = [ev.Token(content="Hi there"), ev.Done(duration_ms=1, usage=USAGE)]
    await client.fire("send_edit", form_data={"edited": "hello there"})  # sent again from its box

    state = await client.state()
    assert [(r.message, r.fork_turn) for r in pipeline.requests] == [("hello there", 0)] * 2
    assert state.refused_note == "" and [m.content for m in state.messages] == ["hello there", "Hi there"]


async def test_a_refused_regenerate_shows_the_transcript_again(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    stored: None,
) -> None:
    await client.fire("open_session", session_id=SESSION)
    pipeline.reject = ChatRejected(429, "quota", "Daily token quota exhausted.")

    await client.fire("regenerate")

    state = await client.state()
    assert [m.id for m in state.messages] == [m.id for m in TURNS]
    assert state.refused_note == QUOTA_NOTE and state.editing_id == ""


async def test_a_card_answered_or_dropped_elsewhere_gives_way_to_the_servers_session(
    client: Client,
    pipeline: SimpleNamespace,
    resume: SimpleNamespace,
    stored: None,
) -> None:
    """Tester: after another tab edited an earlier message, this tab's stale card stayed answerable,
    showing "approved by you" and "waiting for you" side by side over the old transcript."""
    from tests.state.chat_harness import APPROVAL

    pipeline.events = [ev.Token(content="Hi"), APPROVAL]
    await client.fire("open_session", session_id=SESSION)
    await client.fire("send", form_data={"message": "please calculate (12+8)*3"})
    assert (await client.state()).interrupt.kind == "tool_approval"
    resume.reject = ChatRejected(409, "no_interrupt", "Nothing is waiting for an answer in this session.")

    await client.fire("submit_approval", form_data={})

    state = await client.state()
    assert state.interrupt.kind == "" and not state.is_streaming, "the server has no card: none is shown"
    assert [m.id for m in state.messages] == [m.id for m in TURNS], "the transcript as the server has it"
    assert state.refused_note == "Nothing is waiting for an answer in this conversation any more."
