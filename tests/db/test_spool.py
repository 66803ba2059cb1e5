"""The spool file: writes the database refused, kept outside it until written back (issue 17 item 3)."""

from __future__ import annotations

from pathlib import Path

from ventapp.db.spool import Spool


def test_appended_entries_survive_a_new_process_until_marked_done(tmp_path: Path) -> None:
    path = tmp_path / "spool.jsonl"
    spool = Spool(path)
    first = spool.append("run", {"run_id": "r1", "answer": {"content": "héllo"}})
    second = spool.append("settlement", {"run_id": "r2"})

    reopened = Spool(path)  # what a restarted process sees
    assert [(e.id, e.kind) for e in reopened.pending()] == [(first, "run"), (second, "settlement")]
    assert reopened.pending()[0].payload["answer"]["content"] == "héllo"
    assert reopened.count() == 2

    reopened.mark_done(first)
    assert [e.id for e in Spool(path).pending()] == [second]
    reopened.mark_done(first)  # marking twice does not hide the other entry
    assert reopened.count() == 1
    reopened.mark_done(second)
    assert reopened.count() == 0 and path.read_text() == "", "an all-done spool is emptied"


def test_a_torn_last_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "spool.jsonl"
    spool = Spool(path)
    kept = spool.append("run", {"run_id": "r1"})
    with path.open("a") as handle:  # a crash in the middle of an append
        handle.write('{"id": "x", "kind": "ru')
    assert [e.id for e in Spool(path).pending()] == [kept]


def test_count_of_a_missing_file_is_zero(tmp_path: Path) -> None:
    assert Spool(tmp_path / "none" / "spool.jsonl").count() == 0
