"""Uploads: name cleaning, size and emptiness checks, saving without overwriting, undoing."""

from __future__ import annotations

from pathlib import Path

import pytest

from ventapp.agent.uploads import UploadRejected, check_upload, clean_upload_name, discard_upload, save_upload
from ventapp.agent.workspace import session_dir
from ventapp.config import Settings, load_settings

SESSION = "0b6f7a3e-1d2c-4b5a-9e8f-112233445566"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path), "UPLOAD_MAX_BYTES": "10"}
    )


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("report.pdf", "report.pdf"),
        ("  fan curve.csv  ", "fan curve.csv"),
        ("report..final.pdf", "report.final.pdf"),
        ("风机曲线.xlsx", "风机曲线.xlsx"),
        (".env", ".env"),
        ("e\u0301.txt", "\u00e9.txt"),
    ],
)
def test_clean_upload_name_keeps_plain_names(raw: str, clean: str) -> None:
    assert clean_upload_name(raw) == clean


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "   ",
        ".",
        "..",
        "...",
        "../x.txt",
        "/etc/passwd",
        "a/b.txt",
        "C:\\x\\y.txt",
        "a\x00b",
        "a\nb",
        "a\x7fb",
        "报告\u202evsc.exe",  # shows as 报告exe.csv (try19)
        "a\u2066b.txt",
        "a\u200bb.txt",
        "x" * 256,
    ],
)
def test_clean_upload_name_refuses_paths_and_control_characters(raw: str | None) -> None:
    with pytest.raises(UploadRejected) as refused:
        clean_upload_name(raw)
    assert refused.value.status == 400 and refused.value.code == "bad_request" and refused.value.message


def test_check_upload_sizes() -> None:
    assert check_upload("a.txt", b"x" * 10, 10) == "a.txt"
    with pytest.raises(UploadRejected) as too_large:
        check_upload("a.txt", b"x" * 11, 10)
    assert (too_large.value.status, too_large.value.code) == (413, "too_large")


def test_a_file_over_the_limit_is_worded_as_the_ui_words_it() -> None:
    """Tester: the API said "文件超过了 20,971,520 字节的上限。" where the UI says "文件超过了上传上限 20 MB。"."""
    with pytest.raises(UploadRejected) as refused:
        check_upload("a.txt", b"x" * (20 * 1024 * 1024 + 1), 20 * 1024 * 1024)
    assert refused.value.worded("zh-CN") == "文件超过了上传上限 20 MB。"
    assert refused.value.worded("en") == "The file is larger than the 20 MB an upload may have."
    assert "20,971,520 bytes" in refused.value.message, "the English detail keeps the bytes"
    with pytest.raises(UploadRejected) as empty:
        check_upload("a.txt", b"", 10)
    assert empty.value.status == 400


def test_save_upload_never_overwrites(settings: Settings) -> None:
    first = save_upload(settings, "alice", SESSION, "data.csv", b"one")
    second = save_upload(settings, "alice", SESSION, "data.csv", b"two")
    bare = save_upload(settings, "alice", SESSION, "README", b"three")

    assert (first, second, bare) == (
        "/workspace/uploads/data.csv",
        "/workspace/uploads/data-2.csv",
        "/workspace/uploads/README",
    )
    uploads = session_dir(settings.workspaces_dir, "alice", SESSION) / "workspace" / "uploads"
    assert (uploads / "data.csv").read_bytes() == b"one" and (uploads / "data-2.csv").read_bytes() == b"two"


@pytest.mark.parametrize(("name", "data"), [("../x", b"data"), ("big.bin", b"x" * 11), ("e.txt", b"")])
def test_refused_upload_writes_nothing(settings: Settings, name: str, data: bytes) -> None:
    with pytest.raises(UploadRejected):
        save_upload(settings, "alice", SESSION, name, data)
    assert not settings.workspaces_dir.exists()


def test_uploads_folder_symlinked_out_is_refused(settings: Settings, tmp_path: Path) -> None:
    workspace = session_dir(settings.workspaces_dir, "alice", SESSION) / "workspace"
    workspace.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace / "uploads").symlink_to(elsewhere)

    with pytest.raises(UploadRejected):
        save_upload(settings, "alice", SESSION, "a.txt", b"data")
    assert list(elsewhere.iterdir()) == []


def test_discard_upload_removes_the_file_and_empty_folders(settings: Settings) -> None:
    kept = save_upload(settings, "alice", "11111111-2222-4333-8444-555555555555", "keep.txt", b"k")
    path = save_upload(settings, "alice", SESSION, "a.txt", b"data")

    discard_upload(settings, "alice", SESSION, path)
    discard_upload(settings, "alice", SESSION, path)  # idempotent

    assert not session_dir(settings.workspaces_dir, "alice", SESSION).exists()
    other = session_dir(settings.workspaces_dir, "alice", "11111111-2222-4333-8444-555555555555")
    assert (other / "workspace" / "uploads" / kept.rsplit("/", 1)[1]).exists()
