"""Forking before a turn (``ventapp.agent.fork``): edit-and-resend and regenerate, in-process with the scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from sqlmodel import Session, select

from tests.agent.test_pipeline import _runtime
from tests.scripted_llm.server import ScriptedServer
from ventapp.agent.pipeline import ChatRejected, ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.db import chat_store, session_store
from ventapp.db.models import ChatMessage


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


async def _turn(runtime: AgentRuntime, message: str, session_id: str | None = None, **fields: Any) -> str:
    run = await start_chat(runtime, ChatRequest(message=message, session_id=session_id, **fields))
    async for _ in run.events():
        pass
    return run.session_id


def _user_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m.get("role") == "user"]


async def _humans(runtime: AgentRuntime, session_id: str) -> list[str]:
    state = await runtime.agent.aget_state({"configurable": {"thread_id": session_id}})
    return [str(m.content) for m in state.values.get("messages", []) if isinstance(m, HumanMessage)]


async def test_edit_a_middle_turn_forks_from_the_checkpoint_before_it(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        session_id = await _turn(runtime, "first question")
        await _turn(runtime, "second question", session_id)
        await _turn(runtime, "third question", session_id)

        await _turn(runtime, "second, edited", session_id, fork_turn=1)

        assert _user_texts(llm.requests()[-1]) == ["first question", "second, edited"], (
            "the model saw the fork"
        )
        assert await _humans(runtime, session_id) == ["first question", "second, edited"]
        stored = chat_store.list_messages(runtime.engine, session_id)
        assert [(m.role, m.content) for m in stored if m.role == "user"] == [
            ("user", "first question"),
            ("user", "second, edited"),
        ]
        assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]

        # Regenerate the last answer: the same text again, forked before it.
        await _turn(runtime, "second, edited", session_id, fork_turn=1)
        assert _user_texts(llm.requests()[-1]) == ["first question", "second, edited"]
        assert len(chat_store.list_messages(runtime.engine, session_id)) == 4
    finally:
        await runtime.close()


async def test_edit_the_first_turn_starts_the_thread_afresh(tmp_path: Path, llm: ScriptedServer) -> None:
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        session_id = await _turn(runtime, "hello there")
        await _turn(runtime, "and again", session_id)
        await _turn(runtime, "hello, edited", session_id, fork_turn=0)
        assert _user_texts(llm.requests()[-1]) == ["hello, edited"]
        assert await _humans(runtime, session_id) == ["hello, edited"]
        with pytest.raises(ChatRejected) as refused:
            await _turn(runtime, "nothing there", session_id, fork_turn=5)
        assert refused.value.code == "no_turn" and refused.value.status == 409
    finally:
        await runtime.close()


def _roles(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (m["role"], str(m.get("content") or "")) for m in request["messages"] if m.get("role") != "system"
    ]


async def test_a_second_fork_does_not_stop_at_the_first_forks_copy(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    # Regenerating the last answer writes a copy checkpoint (no run id); editing an earlier
    # turn afterwards used to stop there and keep the replaced turn in the model's context.
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        session_id = await _turn(runtime, "alpha 第一")
        await _turn(runtime, "计算 1+2", session_id)
        await _turn(runtime, "计算 5*5", session_id)
        await _turn(runtime, "计算 5*5", session_id, fork_turn=2)  # regenerate
        assert _user_texts(llm.requests()[-1]) == ["alpha 第一", "计算 1+2", "计算 5*5"]

        await _turn(runtime, "计算 7*6", session_id, fork_turn=1)  # edit the second turn
        first = _roles(llm.requests()[-1])
        assert _user_texts(llm.requests()[-1]) == ["alpha 第一", "计算 7*6"]
        assert not any("1+2" in text for _role, text in first)
        assert [role for role, _text in first] == ["user", "assistant", "user", "assistant", "tool"], first
        assert await _humans(runtime, session_id) == ["alpha 第一", "计算 7*6"]

        # Edit the last turn, then the one before it: the same from the other side.
        session_id = await _turn(runtime, "one")
        await _turn(runtime, "two", session_id)
        await _turn(runtime, "three", session_id)
        await _turn(runtime, "three, edited", session_id, fork_turn=2)
        await _turn(runtime, "two, edited", session_id, fork_turn=1)
        assert _roles(llm.requests()[-1])[0][0] == "user"
        assert _user_texts(llm.requests()[-1]) == ["one", "two, edited"]
        assert await _humans(runtime, session_id) == ["one", "two, edited"]
    finally:
        await runtime.close()


async def test_an_edited_turn_keeps_the_replaced_turns_attachments(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        csv = "/workspace/uploads/airflow.csv"
        session_id = await _turn(runtime, "first question")
        await _turn(runtime, "summarise this file", session_id, attachments=[csv])
        assert f"Attached files (read them with read_file): {csv}" in _user_texts(llm.requests()[-1])[-1]

        await _turn(runtime, "summarise this file, briefly", session_id, fork_turn=1)
        sent = _user_texts(llm.requests()[-1])
        assert sent[0] == "first question" and len(sent) == 2
        assert sent[1] == f"summarise this file, briefly\n\nAttached files (read them with read_file): {csv}"
        stored = [m for m in chat_store.list_messages(runtime.engine, session_id) if m.role == "user"]
        assert [(m.content, m.attachments) for m in stored] == [
            ("first question", []),
            ("summarise this file, briefly", [csv]),
        ]

        # A file added to the edit comes after the kept one, each listed once.
        extra = "/workspace/uploads/fans.csv"
        await _turn(runtime, "compare both", session_id, fork_turn=1, attachments=[csv, extra])
        assert _user_texts(llm.requests()[-1])[-1].endswith(f"read_file): {csv}, {extra}")

        # A row stored before chat_messages.attachments existed (NULL): the agent's copy lists them.
        with Session(runtime.engine) as db:
            for row in db.exec(select(ChatMessage).where(ChatMessage.session_id == session_id)).all():
                row.attachments = None
                db.add(row)
            db.commit()
        await _turn(runtime, "compare both, again", session_id, fork_turn=1)
        assert _user_texts(llm.requests()[-1])[-1].endswith(f"read_file): {csv}, {extra}")
    finally:
        await runtime.close()


async def test_the_title_follows_an_edited_first_message_only_when_it_was_derived_from_it(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """Issue 12: the sidebar kept the replaced first message as the conversation's name."""
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        session_id = await _turn(runtime, "hello   there")
        await _turn(runtime, "and again", session_id)
        await _turn(runtime, "and again, edited", session_id, fork_turn=1)
        assert chat_store.get_session(runtime.engine, session_id).title == "hello there", "not the first"

        await _turn(runtime, "how much air does a face need?", session_id, fork_turn=0)
        assert chat_store.get_session(runtime.engine, session_id).title == "how much air does a face need?"

        session_store.update_session(runtime.engine, session_id, "default", title="Face airflow")
        await _turn(runtime, "airflow for a face, edited", session_id, fork_turn=0)
        assert chat_store.get_session(runtime.engine, session_id).title == "Face airflow", (
            "a name given stays"
        )
    finally:
        await runtime.close()


async def test_an_edit_may_leave_out_files_the_replaced_turn_carried(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """Issue 12: the edit form shows the files that go with the edited message, removable."""
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        csv, fans = "/workspace/uploads/airflow.csv", "/workspace/uploads/fans.csv"
        session_id = await _turn(runtime, "compare these", attachments=[csv, fans])

        await _turn(runtime, "only the fans", session_id, fork_turn=0, keep_attachments=[fans])

        assert _user_texts(llm.requests()[-1])[-1].endswith(f"read_file): {fans}")
        (stored,) = [m for m in chat_store.list_messages(runtime.engine, session_id) if m.role == "user"]
        assert stored.attachments == [fans]
    finally:
        await runtime.close()
