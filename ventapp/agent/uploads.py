"""Files a user attaches to a chat turn: checked, then saved into the session's ``/workspace/uploads/``.

A refused upload writes nothing. Names are reduced to a plain file name the agent
can address (``/workspace/uploads/<name>``); anything that is not one — a path,
``..``, NUL or other control characters, an empty name — is refused, never guessed.
"""

from __future__ import annotations

import os
import re
import unicodedata

from ventapp.agent.workspace import UPLOADS_FOLDER, WORKSPACE_ROUTE, area_dir, session_dir
from ventapp.config import Settings
from ventapp.i18n import t
from ventapp.i18n.formats import FileSize, number
from ventapp.refusal import Refusal
from ventapp.text_rules import invisible_character

MAX_NAME_BYTES = 255
"""Longest accepted file name in UTF-8 bytes (the usual file-system limit)."""
_MAX_RENAMES = 1000
_DOT_RUN = re.compile(r"\.{2,}")


class UploadRejected(Refusal):
    """An upload was refused; nothing was written.

    A :class:`~ventapp.refusal.Refusal` made with :meth:`~ventapp.refusal.Refusal.by_key`: 400
    ``bad_request`` or 413 ``too_large``, its sentence a ``refusal.upload.*`` id (``message``: in
    English), which the API and the UI word in their language.
    """


def too_large(max_bytes: int) -> UploadRejected:
    """413 ``too_large`` for a file over ``UPLOAD_MAX_BYTES``: worded as the UI words it, the limit
    in MB ("文件超过了上传上限 20 MB。", ``attach.too_large``); its ``message`` (the API's English
    ``detail``) names the limit in bytes (``refusal.upload.too_large``)."""
    return UploadRejected(
        413,
        "too_large",
        t("refusal.upload.too_large", "en", limit=number(max_bytes, "en")),
        key="attach.too_large",
        params={"max": FileSize(max_bytes)},
    )


def _bad_name(key: str, **params: object) -> UploadRejected:
    return UploadRejected.by_key(400, "bad_request", key, **params)


def decode_upload_name(raw: bytes) -> str:
    """A file name as the client's bytes spell it, decoded as UTF-8 (never guessed as Latin-1).

    Raises:
        UploadRejected: 400 when the bytes are not valid UTF-8.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad_name("refusal.upload.not_utf8") from None


def clean_upload_name(filename: str | None) -> str:
    """The plain file name an upload is stored under.

    Surrounding blanks are trimmed, the name is NFC-normalised and runs of dots are
    folded to one (the workspace refuses any ``..`` in a path).

    Raises:
        UploadRejected: 400 for an empty name, control or invisible characters (NUL, bidi
            overrides, zero-width; :func:`ventapp.text_rules.invisible_character`), a
            path (``/`` or ``\\``), a name made only of dots, or more than 255 bytes.
    """
    name = unicodedata.normalize("NFC", filename or "").strip()
    if not name:
        raise _bad_name("refusal.upload.no_name")
    if invisible_character(name) is not None:  # "报告\u202evsc.exe" would show as "报告exe.csv"
        raise _bad_name("refusal.upload.control")
    if "/" in name or "\\" in name:  # C:\windows\win.ini too: a Windows path is still a path
        raise _bad_name("refusal.upload.path")
    if not name.strip(". "):
        raise _bad_name("refusal.upload.only_dots")
    name = _DOT_RUN.sub(".", name)
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise _bad_name("refusal.upload.name_too_long", limit=MAX_NAME_BYTES)
    return name


def check_upload(filename: str | None, data: bytes, max_bytes: int) -> str:
    """Validate one upload without touching the disk; return the cleaned name.

    Args:
        filename: The name the client sent.
        data: The file's bytes (read at most ``max_bytes + 1`` of them).
        max_bytes: ``Settings.upload_max_bytes``.

    Raises:
        UploadRejected: 413 when larger than ``max_bytes``; 400 when empty or badly named.
    """
    if len(data) > max_bytes:
        raise too_large(max_bytes)
    name = clean_upload_name(filename)
    if not data:
        raise _bad_name("refusal.upload.empty")
    return name


def _candidates(name: str) -> list[str]:
    stem, dot, ext = name.rpartition(".")
    if not stem:  # ".bashrc" or "README": no extension to keep
        stem, dot, ext = name, "", ""
    return [name, *(f"{stem}-{n}{dot}{ext}" for n in range(2, _MAX_RENAMES))]


def save_upload(
    settings: Settings, user_name: str, session_id: str, filename: str | None, data: bytes
) -> str:
    """Save an upload into the session's ``/workspace/uploads/`` and return its virtual path.

    An existing file is never overwritten: ``data.csv`` becomes ``data-2.csv``. Blocking:
    call through ``asyncio.to_thread``.

    Args:
        settings: For ``workspaces_dir`` and ``upload_max_bytes``.
        user_name: The session's owner (part of the folder name).
        session_id: The session the file belongs to.
        filename: The name the client sent.
        data: The file's bytes.

    Returns:
        The path the agent uses, e.g. ``/workspace/uploads/data.csv``.

    Raises:
        UploadRejected: 413 too large; 400 empty, badly named, or the uploads folder is
            not inside the session's folder (nothing is written in every case).
        OSError: The disk refused the write.
    """
    name = check_upload(filename, data, settings.upload_max_bytes)
    folder = area_dir(settings.workspaces_dir, user_name, session_id) / UPLOADS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    if not folder.resolve().is_relative_to(
        session_dir(settings.workspaces_dir, user_name, session_id).resolve()
    ):
        raise UploadRejected.by_key(400, "bad_request", "refusal.upload.folder")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for candidate in _candidates(name):
        target = folder / candidate
        try:
            fd = os.open(target, flags, 0o644)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        return f"{WORKSPACE_ROUTE}{UPLOADS_FOLDER}/{candidate}"
    raise UploadRejected.by_key(400, "bad_request", "refusal.upload.too_many")


def discard_upload(settings: Settings, user_name: str, session_id: str, virtual_path: str) -> None:
    """Undo :func:`save_upload` because the turn it was for was refused: remove the file and empty folders.

    Blocking: call through ``asyncio.to_thread``. A missing file is ignored.
    """
    prefix = f"{WORKSPACE_ROUTE}{UPLOADS_FOLDER}/"
    name = virtual_path.removeprefix(prefix)
    if name == virtual_path or not name or "/" in name:
        return
    root = session_dir(settings.workspaces_dir, user_name, session_id)
    uploads = area_dir(settings.workspaces_dir, user_name, session_id) / UPLOADS_FOLDER
    (uploads / name).unlink(missing_ok=True)
    for folder in (uploads, uploads.parent, root, root.parent):
        try:
            folder.rmdir()  # only succeeds while empty
        except OSError:
            break
