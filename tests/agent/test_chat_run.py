"""A run's durability while it streams (issue 17 item 4): usage settled per call, answer saved as it grows."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.scripted_llm.script import long_answer
from tests.scripted_llm.server import ScriptedServer
from tests.support import open_runtime as _runtime
from ventapp.agent import events as ev
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.db import billing_store, chat_store


@pytest.fixture
async def llm() -> AsyncIterator[ScriptedServer]:
    # One server per async test: langchain-openai caches its async client per base_url and loop.
    with ScriptedServer(delay_ms=20) as server:
        yield server


async def _until(condition, timeout_s: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout_s
    while asyncio.get_running_loop().time() < deadline:
        if await asyncio.to_thread(condition):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_finished_call_is_settled_and_partial_answer_saved_while_the_run_streams(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    llm.push(
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "2+2"}}]},
        {"content": long_answer(150)},
    )
    runtime = await _runtime(tmp_path, llm.base_url, ANSWER_SAVE_INTERVAL_S="0.2")
    engine = runtime.engine
    try:
        run = await start_chat(runtime, ChatRequest(message="please calculate 2+2", user_name="u"))
        events = run.events()
        streamed = ""
        async for event in events:  # into the second call's answer, then stop reading a moment
            if event.type == "token":
                streamed += event.content
                break
        # The graph keeps streaming into the run's queue; what matters is what the database has now.
        settled = await _until(lambda: len(billing_store.ledger_for_run(engine, run.run_id)) == 1)
        saved = await _until(
            lambda: bool((chat_store.get_run(engine, run.run_id).partial or {}).get("content"))  # type: ignore[union-attr]
        )
        mid_run = chat_store.get_run(engine, run.run_id)
        assert mid_run is not None and mid_run.status == "running", "checked while the run still streams"
        assert settled, "the finished tool-call step was not in the ledger until the run ended"
        assert saved, "no partial answer was saved while it grew"
        partial = mid_run.partial or {}
        assert long_answer(150).startswith(partial["content"])
        assert [card["tool"] for card in partial["tool_calls"]] == ["calculate"]
        assert partial["usage"]["model_calls"] >= 1

        async for event in events:
            if event.type == "token":
                streamed += event.content
        final = chat_store.get_run(engine, run.run_id)
        assert final is not None and final.status == "success" and final.partial is None
        rows = billing_store.ledger_for_run(engine, run.run_id)
        assert len(rows) == 2 and len({row.id for row in rows}) == 2, "each call booked once"
        (answer,) = [m for m in chat_store.list_messages(engine, run.session_id) if m.role == "assistant"]
        assert answer.content == streamed == long_answer(150)
    finally:
        await runtime.close()


async def test_session_locks_do_not_pile_up(tmp_path: Path, llm: ScriptedServer) -> None:
    """Issue 17 item 13: one lock per session ever chatted in was kept for the process's life."""
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        for index in range(5):
            run = await start_chat(runtime, ChatRequest(message=f"hello {index}", user_name="u"))
            assert [event.type async for event in run.events()][-1] == "done"
        del run  # what a finished request leaves behind: nothing that holds the lock
        assert len(runtime._session_locks) == 0
        assert runtime.active_runs == {} and runtime.gate.in_flight == 0
        held = runtime.session_lock("00000000-0000-0000-0000-000000000001")
        assert runtime.session_lock("00000000-0000-0000-0000-000000000001") is held, "one lock while in use"
    finally:
        await runtime.close()


async def test_calls_booked_during_the_run_are_not_counted_twice_against_the_quota(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """Settling per call puts the run's own calls in today's total: the quota check must not add them again."""
    from ventapp.billing.guard import set_user_quota

    three_calls = (
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "2+2"}}]},
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "3+3"}}]},
        {"content": "The results are 4 and 6."},
    )
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        llm.push(*three_calls)
        probe = await start_chat(runtime, ChatRequest(message="please calculate 2+2", user_name="probe"))
        assert [event.type async for event in probe.events()][-1] == "done"
        rows = billing_store.ledger_for_run(runtime.engine, probe.run_id)
        assert len(rows) == 3
        first_two = sum(row.input_tokens + row.output_tokens for row in rows[:2])

        # The check after the second call sees the first one booked already; the run may go on
        # as long as the two calls together have not reached the limit.
        set_user_quota(runtime.engine, "capped", first_two + 50)
        llm.push(*three_calls)
        run = await start_chat(runtime, ChatRequest(message="please calculate 2+2", user_name="capped"))
        out = [event async for event in run.events()]
        assert out[-1].type == "done", out[-1]
    finally:
        await runtime.close()


async def test_a_stop_before_the_graph_starts_is_kept_and_no_model_is_called(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """A client that leaves at once, or a Stop pressed during admission, is not lost (issue 11)."""
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="long answer please", user_name="u"))
        assert run.request_stop() is True
        assert run.request_stop() is False, "one stop is enough"
        events = [event async for event in run.events()]
        assert events[-1].type == "error" and events[-1].code == "cancelled"  # type: ignore[union-attr]
        assert not any(event.type == "token" for event in events)
        assert llm.requests() == []
        assert chat_store.get_run(runtime.engine, run.run_id).status == "cancelled"  # type: ignore[union-attr]
        assert run.request_stop() is False, "a finished run cannot be stopped"
    finally:
        await runtime.close()


async def test_tokens_a_slow_consumer_missed_arrive_joined_and_make_the_same_answer(tmp_path: Path) -> None:
    """Issue 18: a consumer that falls behind gets the waiting tokens as one ``token`` event."""
    with ScriptedServer(delay_ms=0) as fast:
        runtime = await _runtime(tmp_path, fast.base_url)
        try:
            run = await start_chat(runtime, ChatRequest(message="long answer please", user_name="u"))
            events = run.events()
            first = [await anext(events) for _ in range(3)]  # agent_start, thinking, the first token
            assert first[-1].type == "token"
            await asyncio.sleep(1.0)  # the rest of the answer streams into the run's queue meanwhile
            tokens = [first[-1].content] + [event.content async for event in events if event.type == "token"]
            assert "".join(tokens) == long_answer(), "joined tokens concatenate to the answer"
            assert len(tokens) < len(long_answer().split()), "the waiting tokens were joined"
            (answer,) = [
                m for m in chat_store.list_messages(runtime.engine, run.session_id) if m.role == "assistant"
            ]
            assert answer.content == long_answer()
        finally:
            await runtime.close()


async def test_quota_between_calls_reads_no_database(tmp_path: Path, llm: ScriptedServer) -> None:
    """Issue 18: the check after each model call uses the reservation read at admission."""
    import sqlalchemy as sa

    from ventapp.billing.guard import set_user_quota

    runtime = await _runtime(tmp_path, llm.base_url)
    quota_reads: list[str] = []

    def seen(_conn, _cursor, statement, *_args) -> None:  # type: ignore[no-untyped-def]
        if "user_quotas" in statement:
            quota_reads.append(statement)

    try:
        set_user_quota(runtime.engine, "metered", 1_000_000)
        llm.push(
            {"tool_calls": [{"name": "calculate", "arguments": {"expression": "2+2"}}]},
            {"tool_calls": [{"name": "calculate", "arguments": {"expression": "3+3"}}]},
            {"content": "The results are 4 and 6."},
        )
        run = await start_chat(runtime, ChatRequest(message="please calculate 2+2", user_name="metered"))
        sa.event.listen(runtime.engine, "before_cursor_execute", seen)
        out = [event async for event in run.events()]
        sa.event.remove(runtime.engine, "before_cursor_execute", seen)
        assert out[-1].type == "done" and len(llm.requests()) == 3
        assert quota_reads == [], "the quota was read from the database between model calls"
    finally:
        await runtime.close()


async def test_what_the_users_other_runs_book_counts_against_an_admitted_run(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """The reservation is read once per run, yet another run of the user booking meanwhile still counts."""
    from ventapp.billing.guard import set_user_quota

    tool_then_text = (
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "2+2"}}]},
        {"content": "The result is 4."},
    )
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        llm.push(*tool_then_text)  # what each turn costs, measured
        probe = await start_chat(runtime, ChatRequest(message="please calculate 2+2", user_name="probe"))
        assert [event.type async for event in probe.events()][-1] == "done"
        first_call = billing_store.ledger_for_run(runtime.engine, probe.run_id)[0]
        tool_call_tokens = first_call.input_tokens + first_call.output_tokens
        probe = await start_chat(runtime, ChatRequest(message="hello", user_name="probe"))
        assert [event.type async for event in probe.events()][-1] == "done"
        hello_tokens = sum(
            r.input_tokens + r.output_tokens
            for r in billing_store.ledger_for_run(runtime.engine, probe.run_id)
        )

        # Enough for the first call alone (the run would go on), not once the other run booked.
        set_user_quota(runtime.engine, "shared", tool_call_tokens + hello_tokens // 2)
        admitted = await start_chat(runtime, ChatRequest(message="please calculate 2+2", user_name="shared"))
        other = await start_chat(runtime, ChatRequest(message="hello", user_name="shared"))
        assert [event.type async for event in other.events()][-1] == "done"
        llm.push(*tool_then_text)
        calls_before = len(llm.requests())
        out = [event async for event in admitted.events()]
        assert out[-1].type == "error" and out[-1].code == "quota", out[-1]
        assert len(llm.requests()) == calls_before + 1, "no model call after the quota ran out"
    finally:
        await runtime.close()


async def test_admission_writes_the_turn_in_one_transaction(tmp_path: Path, llm: ScriptedServer) -> None:
    """Issue 18: session, message and run record were three commits (three fsyncs) before the first token."""
    import sqlalchemy as sa

    runtime = await _runtime(tmp_path, llm.base_url)
    commits: list[int] = []

    def committed(_conn) -> None:  # type: ignore[no-untyped-def]
        commits.append(1)

    try:
        sa.event.listen(runtime.engine, "commit", committed)
        run = await start_chat(runtime, ChatRequest(message="hello", user_name="u"))
        sa.event.remove(runtime.engine, "commit", committed)
        admitted = len(commits)
        assert [event.type async for event in run.events()][-1] == "done"
        assert admitted == 1
        (message,) = chat_store.list_messages(runtime.engine, run.session_id)[:1]
        assert message.role == "user" and message.content == "hello"
    finally:
        await runtime.close()


async def test_done_carries_the_stored_duration_that_a_re_read_shows(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """The streaming tab showed "0.1 sec" and a re-reading tab "0.2 sec": ``done`` had a clock of its own."""
    import sqlalchemy as sa

    from ventapp.db.models import ExecutionRun

    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="hello", user_name="u"))
        # Admitted 1.25 s ago as far as the run row knows: the two clocks now disagree by far more
        # than a rounding, so only the stored figure can match.
        table = ExecutionRun.__table__
        with runtime.engine.begin() as connection:
            started = connection.execute(
                sa.select(table.c.started_at).where(table.c.id == run.run_id)
            ).scalar_one()
            connection.execute(
                sa.update(table)
                .where(table.c.id == run.run_id)
                .values(started_at=started - timedelta(milliseconds=1250))
            )
        done = [event async for event in run.events()][-1]
        assert done.type == "done"
        stored = chat_store.get_run(runtime.engine, run.run_id)
        assert stored is not None and stored.duration_ms is not None and stored.duration_ms >= 1250
        assert done.duration_ms == stored.duration_ms
    finally:
        await runtime.close()


async def test_a_stopped_runs_error_carries_the_stored_duration_and_the_kept_answers_usage(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """The streaming tab's stopped answer had no footer; a re-read showed the stored one."""
    llm.push({"content": long_answer(150)})
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="long answer please", user_name="u"))
        events = run.events()
        async for event in events:
            if event.type == "token":
                run.request_stop()
                break
        closing = [event async for event in events][-1]
        assert isinstance(closing, ev.Error) and closing.code == "cancelled"
        stored = chat_store.get_run(runtime.engine, run.run_id)
        (answer,) = [
            m for m in chat_store.list_messages(runtime.engine, run.session_id) if m.role == "assistant"
        ]
        assert stored is not None and stored.status == "cancelled"
        assert closing.duration_ms == stored.duration_ms and closing.duration_ms is not None
        assert closing.usage is not None and closing.usage.model_dump(mode="json") == answer.usage
        assert closing.usage.output_tokens > 0, "the kept part's tokens"
    finally:
        await runtime.close()


async def test_the_answer_its_run_and_its_last_ledger_rows_are_one_commit(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """Issue 18: the final save and the last calls' settlement were two worker-thread hops and two
    commits (two fsyncs); now one. Atomic too: a refused ledger write keeps nothing of the answer."""
    import sqlalchemy as sa

    from ventapp.db import billing_store, turn_writes

    runtime = await _runtime(tmp_path, llm.base_url, ANSWER_SAVE_INTERVAL_S="0")
    commits: list[int] = []

    def committed(_conn) -> None:  # type: ignore[no-untyped-def]
        commits.append(1)

    try:
        run = await start_chat(runtime, ChatRequest(message="hello", user_name="u"))
        sa.event.listen(runtime.engine, "commit", committed)
        assert [event.type async for event in run.events()][-1] == "done"
        sa.event.remove(runtime.engine, "commit", committed)
        assert len(commits) == 1
        with runtime.engine.connect() as connection:
            booked = connection.exec_driver_sql(
                "SELECT count(*) FROM usage_ledger WHERE run_id = ?", (run.run_id,)
            ).scalar()
        assert booked == 1

        original = billing_store.write_settlement_in

        def refused(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise sa.exc.OperationalError("INSERT", {}, Exception("disk I/O error"))

        billing_store.write_settlement_in = refused  # type: ignore[assignment]
        try:
            second = await start_chat(runtime, ChatRequest(message="again", user_name="u"))
            frames = [event async for event in second.events()]
        finally:
            billing_store.write_settlement_in = original  # type: ignore[assignment]
        assert frames[-1].type == "error" and frames[-1].code == "storage"
        assert [m.role for m in chat_store.list_messages(runtime.engine, second.session_id)] == ["user"]
        assert turn_writes.finalise_run(runtime.engine, second.run_id, "success") is not None, (
            "the run was left running for the write-back, not finalised without its ledger rows"
        )
    finally:
        await runtime.close()


async def test_a_stop_in_the_middle_of_a_sub_agents_call_books_that_call(
    tmp_path: Path, llm: ScriptedServer
) -> None:
    """The provider bills what the cut sub-agent call generated: the ledger had 1 row for 2 requests."""
    task = {"name": "task", "arguments": {"description": "find the limits", "subagent_type": "researcher"}}
    llm.push({"tool_calls": [task]}, {"content": long_answer(300)})
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="ask the researcher", user_name="u"))
        events = run.events()
        async for event in events:
            if event.type == "agent_start" and event.agent_id != "main":  # the sub-agent started
                break
        # Its model call is streaming (20 ms a chunk; its text never reaches the answer's events).
        assert await _until(lambda: len(llm.requests()) == 2)
        await asyncio.sleep(0.3)
        assert run.request_stop()
        closing = [event async for event in events][-1]
        assert isinstance(closing, ev.Error) and closing.code == "cancelled"
        rows = billing_store.ledger_for_run(runtime.engine, run.run_id)
        assert len(rows) == 2, "the cut sub-agent call is booked"
        assert rows[1].output_tokens > 0 and rows[1].input_tokens > 0
        assert rows[1].input_tokens > 100, (
            "the request the sub-agent sent (prompt, tools), not the turn's words"
        )
        meter = run.kernel.transcript.meter
        assert meter.usage().model_calls == 2 and meter.calls[1].main_thread is False
        assert meter.context_tokens == meter.calls[0].input_tokens, "the main thread's window stays"
        stored = chat_store.get_run(runtime.engine, run.run_id)
        assert stored is not None and stored.status == "cancelled"
        assert (stored.input_tokens, stored.output_tokens) == (
            sum(row.input_tokens for row in rows),
            sum(row.output_tokens for row in rows),
        )
    finally:
        await runtime.close()


async def test_a_failed_run_logs_the_sentence_the_person_reads(
    tmp_path: Path, llm: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """try15: the log said only "OpenAIModelNotFoundError('Error code: 404')" — no path, no hint."""
    llm.push({"error": 503, "message": "overloaded"})
    runtime = await _runtime(tmp_path, llm.base_url)
    try:
        run = await start_chat(runtime, ChatRequest(message="hello", user_name="u"))
        logger = logging.getLogger("ventapp.agent.chat_run")  # the app's logging does not propagate
        logger.addHandler(caplog.handler)
        try:
            assert [event.type async for event in run.events()][-1] == "error"
        finally:
            logger.removeHandler(caplog.handler)
        line = next(r.getMessage() for r in caplog.records if "failed:" in r.getMessage())
        assert "The model server is busy or rate-limiting (HTTP 503): overloaded" in line
    finally:
        await runtime.close()
