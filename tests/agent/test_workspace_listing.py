"""Listing a session's workspace and confining paths to it (``ventapp.agent.workspace_listing``)."""

from __future__ import annotations

import os
from pathlib import Path

from ventapp.agent.workspace_listing import inside, list_workspace


def test_lists_files_newest_first_without_hidden_files_or_symlinks(tmp_path: Path) -> None:
    folder = tmp_path / "workspace"
    (folder / "uploads").mkdir(parents=True)
    (folder / "uploads" / "notes.txt").write_text("Q = 12")
    (folder / "report.md").write_text("# Report\n" * 200)
    os.utime(folder / "uploads" / "notes.txt", (1_000_000, 1_000_000))
    (folder / ".hidden").write_text("x")
    (folder / "results" / ".network-sources").mkdir(parents=True)  # the network tool's records
    (folder / "results" / ".network-sources" / "mine").write_text("/workspace/uploads/mine.csv")
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours")
    (folder / "link.txt").symlink_to(secret)

    files = list_workspace(folder)

    assert [f.path for f in files] == ["/workspace/report.md", "/workspace/uploads/notes.txt"]
    assert files[0].size_bytes == len("# Report\n" * 200) and files[1].modified.year == 1970
    assert list_workspace(tmp_path / "missing") == []


def test_inside_refuses_paths_that_leave_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    (folder / "out.txt").symlink_to(tmp_path / "b.txt")
    assert inside(folder, "/workspace/a.txt") == (folder / "a.txt").resolve()
    for path in (
        "/workspace/../b.txt",
        "/workspace/out.txt",
        "/workspace//etc/passwd",
        "/etc/passwd",
        "/workspace/",
    ):
        assert inside(folder, path) is None, path
