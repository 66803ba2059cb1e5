"""The workspace panel's rows and previews (``ventapp.state.workspace_state``), without a browser."""

from __future__ import annotations

from datetime import UTC, datetime

from ventapp.agent.workspace_listing import WorkspaceFile
from ventapp.state.workspace_state import PREVIEW_ROWS, file_view, read_preview


def test_row_has_size_in_kb_or_mb_time_kind_and_owner_checked_links() -> None:
    item = WorkspaceFile(
        "/workspace/uploads/fan curve.csv", 3_500_000, datetime(2026, 3, 1, 4, 5, tzinfo=UTC)
    )
    row = file_view(item, "sid-1", "alice", "en")
    assert (row.name, row.kind, row.size) == ("fan curve.csv", "csv", "3.3 MB")
    assert "12:05" in row.modified  # Beijing time
    assert row.url == "/api/sessions/sid-1/files?path=/workspace/uploads/fan%20curve.csv&user_name=alice"
    assert row.download_url == row.url + "&download=1"
    zh = file_view(WorkspaceFile("/workspace/a.bin", 2048, item.modified), "s", "u", "zh-CN")
    assert (zh.kind == "other" and "kB" in zh.size) or "千字节" in zh.size


def test_preview_reads_csv_rows_and_text() -> None:
    text, rows = read_preview(b"q,p\n1,2\n", "csv")
    assert text == "" and rows == [["q", "p"], ["1", "2"]]
    _, many = read_preview(b"".join(b"%d\n" % i for i in range(500)), "csv")
    assert len(many) == PREVIEW_ROWS
    text, rows = read_preview("# 报告\n\xff".encode() + b"\xff", "markdown")
    assert text.startswith("# 报告") and rows == [] and "\ufffd" in text
