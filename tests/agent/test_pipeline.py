"""The run pipeline in-process: input shape, unconfigured model, cancellation, session lock."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent import events as ev
from ventapp.agent.pipeline import CANCELLED_MARKER, ChatRejected, ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import load_settings
from ventapp.db import chat_store


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedServer]:
    # One server per async test: langchain-openai caches its async client per base_url and loop.
    with ScriptedServer(delay_ms=5) as server:
        yield server


async def _runtime(tmp_path: Path, base_url: str = "") -> AgentRuntime:
    settings = load_settings(
        {
            "DEEP_AGENT_ENV_PRIORITY": "none",
            "DATA_DIR": str(tmp_path),
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "x" if base_url else "",
            "MODEL_NAME": "scripted-demo",
            "MODEL_MAX_RETRIES": "0",
        }
    )
    return await AgentRuntime.open(settings)


async def test_graph_input_is_a_dict(tmp_path: Path, llm: ScriptedServer) -> None:
    """Pitfall 6: a bare list is taken as __start__'s return value and fails with InvalidUpdateError."""
    runtime = await _runtime(tmp_path, llm.base_url)
    seen: list[Any] = []
    agent = runtime.agent
    original = agent.astream

    def spy(graph_input: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((graph_input, kwargs))
        return original(graph_input, *args, **kwargs)

    agent.astream = spy
    try:
        run = await start_chat(runtime, ChatRequest(message="hello"))
        out = [event async for event in run.events()]
    finally:
        await runtime.close()
    graph_input, kwargs = seen[0]
    assert isinstance(graph_input, dict) and graph_input["messages"][0]["content"] == "hello"
    assert kwargs["config"]["configurable"]["thread_id"] == run.session_id, "invariant 1"
    assert kwargs["stream_mode"] == ["updates", "messages"]
    assert out[-1].type == "done"


async def test_unconfigured_model_says_how_to_configure(tmp_path: Path) -> None:
    runtime = await _runtime(tmp_path)
    try:
        run = await start_chat(runtime, ChatRequest(message="hi"))
        out = [event async for event in run.events()]
        error = out[-1]
        assert isinstance(error, ev.Error) and error.code == "model_unconfigured"
        assert "OPENAI_BASE_URL" in error.message
        rows = chat_store.list_messages(runtime.engine, run.session_id)
        assert rows[0].content == "hi", "the user's message is kept"
        run_row = chat_store.get_run(runtime.engine, run.run_id)
        assert (
            run_row is not None and run_row.status == "failed" and run_row.error_code == "model_unconfigured"
        )
    finally:
        await runtime.close()


async def test_cancelled_run_saves_partial_answer_and_frees_the_session(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="long answer please"))
        with pytest.raises(ChatRejected) as busy:
            await start_chat(runtime, ChatRequest(message="again", session_id=run.session_id))
        assert busy.value.status == 409
        stream = run.events()
        tokens = 0
        async for event in stream:
            tokens += event.type == "token"
            if tokens == 5:
                break
        await stream.aclose()  # what Starlette does when the client goes away
        run_row = chat_store.get_run(runtime.engine, run.run_id)
        assert run_row is not None and run_row.status == "cancelled"
        answer = chat_store.list_messages(runtime.engine, run.session_id)[-1]
        assert answer.role == "assistant" and answer.content.endswith(CANCELLED_MARKER)
        assert len(answer.content) > len(CANCELLED_MARKER)
        assert not runtime.session_lock(run.session_id).locked()
        again = await start_chat(runtime, ChatRequest(message="hello", session_id=run.session_id))
        assert [event.type async for event in again.events()][-1] == "done"
    finally:
        await runtime.close()


async def test_released_run_that_never_streamed_frees_the_lock(tmp_path: Path, llm: ScriptedServer) -> None:
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="hi"))
        run.release()
        assert not runtime.session_lock(run.session_id).locked()
    finally:
        await runtime.close()


async def test_restart_keeps_graph_state(tmp_path: Path, llm: ScriptedServer) -> None:
    """The SQLite checkpointer survives a restart: the model sees the first turn after reopening."""
    runtime = await _runtime(tmp_path, llm.base_url)
    run = await start_chat(runtime, ChatRequest(message="remember the number 4711"))
    [event async for event in run.events()]
    await runtime.close()
    await asyncio.sleep(0)
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        again = await start_chat(runtime, ChatRequest(message="what was it", session_id=run.session_id))
        [event async for event in again.events()]
        texts = " ".join(str(message.get("content")) for message in llm.requests()[-1]["messages"])
        assert "4711" in texts
    finally:
        await runtime.close()


async def test_run_timeout_stops_with_partial_answer(tmp_path: Path) -> None:
    with ScriptedServer(delay_ms=20) as slow:
        settings = load_settings(
            {
                "DEEP_AGENT_ENV_PRIORITY": "none",
                "DATA_DIR": str(tmp_path),
                "OPENAI_BASE_URL": slow.base_url,
                "OPENAI_API_KEY": "x",
                "MODEL_NAME": "scripted-demo",
                "RUN_TIMEOUT_S": "1",
            }
        )
        runtime = await AgentRuntime.open(settings)
        try:
            run = await start_chat(runtime, ChatRequest(message="long answer please"))
            out = [event async for event in run.events()]
            assert isinstance(out[-1], ev.Error) and out[-1].code == "timeout"
            assert any(event.type == "token" for event in out)
            run_row = chat_store.get_run(runtime.engine, run.run_id)
            assert run_row is not None and run_row.status == "failed" and run_row.error_code == "timeout"
            answer = chat_store.list_messages(runtime.engine, run.session_id)[-1]
            assert answer.role == "assistant" and answer.content, "the partial answer is saved"
            assert runtime.gate.in_flight == 0 and not runtime.session_lock(run.session_id).locked()
        finally:
            await runtime.close()


async def test_quota_stops_a_long_run_between_model_calls(tmp_path: Path, llm: ScriptedServer) -> None:
    """The quota is checked again after each model call: a run over it stops before the next call."""
    from ventapp.billing.guard import set_user_quota

    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        set_user_quota(runtime.engine, "frugal", 100)
        run = await start_chat(runtime, ChatRequest(message="please calculate (12+8)*3", user_name="frugal"))
        out = [event async for event in run.events()]
        assert isinstance(out[-1], ev.Error) and out[-1].code == "quota"
        assert len(llm.requests()) == 1, "no model call after the quota ran out"
        with pytest.raises(ChatRejected) as refused:
            await start_chat(runtime, ChatRequest(message="again", user_name="frugal"))
        assert refused.value.status == 429 and refused.value.retry_after
    finally:
        await runtime.close()


async def test_the_skills_are_read_once_per_agent_and_every_turn_is_told_them(
    tmp_path: Path, llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18: deepagents parsed every skill's YAML on each new session's first turn, in a node."""
    import deepagents.middleware.skills as skills_module

    reads: list[str] = []
    original, original_sync = skills_module._alist_skills_with_errors, skills_module._list_skills_with_errors

    async def counted(backend: Any, source: str) -> Any:
        reads.append(source)
        return await original(backend, source)

    def counted_sync(backend: Any, source: str) -> Any:
        reads.append(source)
        return original_sync(backend, source)

    monkeypatch.setattr(skills_module, "_alist_skills_with_errors", counted)
    monkeypatch.setattr(skills_module, "_list_skills_with_errors", counted_sync)
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        reads_after = []
        session_id = None
        for turn in range(4):  # three sessions, the last with a second turn
            run = await start_chat(runtime, ChatRequest(message="hello", session_id=session_id))
            assert [event async for event in run.events()][-1].type == "done"
            session_id = run.session_id if turn == 2 else None
            reads_after.append(len(reads))
    finally:
        await runtime.close()
    # The first turn reads them (so may the runtime's one-off prompt-size check, at the same time).
    assert 1 <= reads_after[0] <= 2 and reads_after[-1] == reads_after[0], reads_after
    systems = [str(request["messages"][0]["content"]) for request in llm.requests()]
    assert len(systems) == 4
    for system in systems:
        assert "/skills/ventilation-calc/SKILL.md" in system
        assert "ventilation-network-analysis" in system


async def test_admission_reads_together_and_refuses_in_the_same_order(
    tmp_path: Path, llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repeat lookup, the quota read and the session read of a turn go to the database at the
    same time (each waits here until all three are in their threads); a request that is a repeat,
    over quota and for another user's session hears of the repeat, then 404 (whatever the quota)."""
    import threading

    from ventapp.agent import admission_checks
    from ventapp.billing import guard
    from ventapp.db import request_keys

    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        first = await start_chat(runtime, ChatRequest(message="hello", user_name="alice", request_id="r1"))
        [event async for event in first.events()]
        bobs = await start_chat(runtime, ChatRequest(message="hello", user_name="bob"))
        [event async for event in bobs.events()]

        all_three = threading.Barrier(3, timeout=5)
        reads = (
            (request_keys, "find_request_key"),
            (admission_checks, "precheck"),
            (chat_store, "get_session"),
        )

        def waiting(original: Any) -> Any:
            def read(*args: Any, **kwargs: Any) -> Any:
                all_three.wait()  # BrokenBarrierError after 5 s when the reads go one after another
                return original(*args, **kwargs)

            return read

        for module, name in reads:
            monkeypatch.setattr(module, name, waiting(getattr(module, name)))
        again = ChatRequest(message="again", user_name="alice", session_id=first.session_id, request_id="r2")
        run = await start_chat(runtime, again)
        monkeypatch.undo()
        [event async for event in run.events()]

        guard.set_user_quota(runtime.engine, "alice", 1)
        refusals = []
        for request_id in ("r1", "r3"):
            with pytest.raises(ChatRejected) as refused:
                await start_chat(
                    runtime,
                    ChatRequest(
                        message="x", user_name="alice", session_id=bobs.session_id, request_id=request_id
                    ),
                )
            refusals.append((refused.value.status, refused.value.code))
        guard.set_user_quota(runtime.engine, "alice", 0)
        with pytest.raises(ChatRejected) as refused:
            await start_chat(runtime, ChatRequest(message="x", user_name="alice", session_id=bobs.session_id))
        refusals.append((refused.value.status, refused.value.code))
    finally:
        await runtime.close()
    assert refusals == [(409, "duplicate_request"), (404, "not_found"), (404, "not_found")]


async def test_a_session_that_does_not_exist_is_404_for_a_user_over_quota(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """Tester: an unknown session id from a user past the daily quota answered 429, not 404; the
    quota still refuses the user's own session."""
    from ventapp.billing import guard

    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        first = await start_chat(runtime, ChatRequest(message="hello", user_name="alice"))
        [event async for event in first.events()]
        guard.set_user_quota(runtime.engine, "alice", 1)
        refusals = []
        for session_id in (str(uuid.uuid4()), first.session_id):
            with pytest.raises(ChatRejected) as refused:
                await start_chat(runtime, ChatRequest(message="x", user_name="alice", session_id=session_id))
            refusals.append((refused.value.status, refused.value.code))
    finally:
        await runtime.close()
    assert refusals == [(404, "not_found"), (429, "quota")]


async def test_a_new_sessions_admission_is_one_worker_thread_hop_and_its_quota_refusal_saves_nothing(
    tmp_path: Path, llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18: a new session's quota read was a hop of its own before the turn's writes."""
    from ventapp.billing.guard import set_user_quota

    runtime = await _runtime(tmp_path, llm.base_url)
    admission = {"precheck", "open_and_read", "open_turn", "load_turn_context", "get_session"}
    hops: list[str] = []
    original = asyncio.to_thread

    async def counted(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        name = getattr(getattr(func, "func", func), "__name__", "")
        if name in admission:
            hops.append(name)
        return await original(func, *args, **kwargs)

    try:
        monkeypatch.setattr(asyncio, "to_thread", counted)
        set_user_quota(runtime.engine, "frugal", 100)
        run = await start_chat(runtime, ChatRequest(message="please calculate (12+8)*3", user_name="frugal"))
        assert hops == ["open_and_read"], hops
        [event async for event in run.events()]  # uses up the quota
        sessions = chat_store.list_sessions(runtime.engine, "frugal")
        with pytest.raises(ChatRejected) as refused:
            await start_chat(runtime, ChatRequest(message="again", user_name="frugal"))
        assert refused.value.status == 429 and refused.value.code == "quota" and refused.value.retry_after
        assert chat_store.list_sessions(runtime.engine, "frugal") == sessions, (
            "the refused turn saved nothing"
        )
        again = await start_chat(runtime, ChatRequest(message="hello", user_name="alice"))
        assert [event async for event in again.events()][-1].type == "done", "the refusal left no slot taken"
    finally:
        await runtime.close()
