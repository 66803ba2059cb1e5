"""The SQLite checkpointer's one-trip, lock-free writes (ventapp.agent.sqlite_saver, issue 18)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ventapp.agent.sqlite_saver import OneTripSqliteSaver


def _checkpoint(number: int, text: str) -> dict:
    return {"v": 1, "id": f"1f000000-0000-6000-8000-{number:012d}", "ts": "2026-12-01T00:00:00+00:00",
            "channel_values": {"messages": [text]}, "channel_versions": {"messages": number},
            "versions_seen": {}, "pending_sends": []}  # fmt: skip


def _config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


async def _save_turn(saver: OneTripSqliteSaver, thread: str) -> None:
    first = await saver.aput(_config(thread), _checkpoint(1, f"{thread} one"), {"step": 0}, {"messages": 1})
    await saver.aput_writes(first, [("messages", f"{thread} pending")], task_id="task-1")
    await saver.aput(first, _checkpoint(2, f"{thread} two"), {"step": 1}, {"messages": 2})


async def test_concurrent_turns_read_back_the_same_through_the_library_saver(tmp_path: Path) -> None:
    path = str(tmp_path / "checkpoints.sqlite")
    threads = [f"t-{n}" for n in range(30)]
    async with OneTripSqliteSaver.from_conn_string(path) as saver:
        await asyncio.gather(*(_save_turn(saver, thread) for thread in threads))
        own = await saver.aget_tuple(_config("t-7"))
        await saver.adelete_thread("t-3")
    async with AsyncSqliteSaver.from_conn_string(path) as library:
        latest = await library.aget_tuple(_config("t-7"))
        history = [item async for item in library.alist(_config("t-7"))]
        first = await library.aget_tuple(
            {
                "configurable": {
                    "thread_id": "t-7",
                    "checkpoint_ns": "",
                    "checkpoint_id": history[-1].checkpoint["id"],
                }
            }
        )
        deleted = await library.aget_tuple(_config("t-3"))

    assert own is not None and own.checkpoint["channel_values"]["messages"] == ["t-7 two"]
    assert latest is not None and latest.checkpoint["channel_values"]["messages"] == ["t-7 two"]
    assert [item.metadata["step"] for item in history] == [1, 0]
    assert first is not None and first.pending_writes == [("task-1", "messages", "t-7 pending")]
    assert deleted is None


async def test_a_write_does_not_wait_for_a_reader_that_is_still_iterating(tmp_path: Path) -> None:
    # The library's alist holds the connection's lock between the items it yields; its writes
    # waited for that lock, so a slow reader (or a busy event loop) held up every run's writes.
    async with OneTripSqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as saver:
        await _save_turn(saver, "reader")
        listing = saver.alist(_config("reader"))
        await anext(listing)  # the reader is now between two items
        await asyncio.wait_for(_save_turn(saver, "writer"), timeout=5)
        rest = [item async for item in listing]
        written = await saver.aget_tuple(_config("writer"))

    assert len(rest) == 1
    assert written is not None and written.checkpoint["channel_values"]["messages"] == ["writer two"]


async def test_a_checkpoint_reads_as_the_library_reads_it_in_one_trip(tmp_path: Path) -> None:
    """Latest, by id (with its pending writes), and none: the same tuples as the library's, one trip each."""
    path = str(tmp_path / "checkpoints.sqlite")
    async with OneTripSqliteSaver.from_conn_string(path) as saver:
        await _save_turn(saver, "t-1")
        first_id = _checkpoint(1, "")["id"]
        by_id = {"configurable": {"thread_id": "t-1", "checkpoint_ns": "", "checkpoint_id": first_id}}
        trips: list[object] = []
        execute = saver.conn._execute

        async def counted(function, *args):  # type: ignore[no-untyped-def]
            trips.append(function)
            return await execute(function, *args)

        saver.conn._execute = counted  # type: ignore[method-assign]
        own = [await saver.aget_tuple(config) for config in (_config("t-1"), by_id, _config("none"))]
        reads_trips = len(trips)
    async with AsyncSqliteSaver.from_conn_string(path) as library:
        expected = [await library.aget_tuple(config) for config in (_config("t-1"), by_id, _config("none"))]

    assert own == expected
    assert own[1] is not None and own[1].pending_writes == [("task-1", "messages", "t-1 pending")]
    assert own[0] is not None and own[0].parent_config is not None
    assert own[0].parent_config["configurable"]["checkpoint_id"] == first_id
    assert own[2] is None
    assert reads_trips == 3, "one trip to the database thread per read (the library makes up to five)"
