"""Failures of the file tools worded for a person (the model keeps the English it got).

Our workspace file access (:mod:`ventapp.tools.workspace_files`, behind the network solver) and
deepagents' file tools (``ls``, ``read_file``, ``write_file``, ``edit_file``, ``glob``, ``grep``)
fail with English sentences and no ``[code]``. Each one we know is matched here to a catalogue id
(``tool.failed.*``), its values (a path, a count) read back from the sentence, so a tool card says
it in the UI language; an unknown failure stays as it came.
"""

from __future__ import annotations

import re

from ventapp.i18n import t
from ventapp.i18n.templates import read_back
from ventapp.tools import workspace_files as wf

_OURS: tuple[tuple[str, str], ...] = (
    (wf.MISSING, "tool.failed.missing_upload"),
    (wf.NO_PATH, "tool.failed.no_path"),
    (wf.NOT_UNDER, "tool.failed.not_under_workspace"),
    (wf.LEADS_OUT, "tool.failed.outside_workspace"),
    (wf.NO_WORKSPACE, "tool.failed.no_workspace"),
    (wf.NO_RUN, "tool.failed.no_workspace"),
)
"""Our templates (the registry closes each reason with a full stop) -> catalogue id."""

_DEEPAGENTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.DOTALL), key)
    for pattern, key in (
        (r"Error: File '(?P<path>.+)' not found\Z", "tool.failed.file_not_found"),
        (r"Error: '(?P<path>.+)' not found\Z", "tool.failed.file_not_found"),
        (r"Error: Path '(?P<path>.+)': path_not_found\Z", "tool.failed.folder_not_found"),
        (r"Error: Path '(?P<path>.+)': not_a_directory\Z", "tool.failed.not_a_folder"),
        (r"Error: String not found in file: ", "tool.failed.text_not_found"),
        (r"Error: String .* appears (?P<count>\d+) times in file\.", "tool.failed.text_ambiguous"),
        (r"Error: parallel file mutations to the same path", "tool.failed.parallel_writes"),
        (r"Error: Path traversal ", "tool.failed.outside_workspace"),
        (r".*the path leads outside this conversation's workspace", "tool.failed.outside_workspace"),
        (r"Error: permission denied for \w+ on (?P<path>\S+)", "tool.failed.permission_denied"),
        (
            r"Error: Line offset (?P<offset>\d+) exceeds file length \((?P<lines>\d+) lines?\)",
            "tool.failed.offset",
        ),
        (r"Error: cannot resolve (?P<path>\S+)\Z", "tool.failed.outside_workspace"),
    )
)
"""deepagents' sentences as its file tools answer through our backend -> catalogue id (a prefix
match unless the pattern ends with ``\\Z``; its groups are the message's values)."""


def file_failure_for_person(reason: str, lang: str) -> str | None:
    """A file tool's failure ``reason`` (without the registry's wrapper) in ``lang``, or None.

    Args:
        reason: E.g. ``"/workspace/uploads/none.csv does not exist; list /workspace/uploads/ to see
            the uploaded files."`` or ``"Error: File '/uploads/none.csv' not found"``.
        lang: ``"zh-CN"`` or ``"en"``.

    Returns:
        E.g. ``"找不到文件 /workspace/uploads/none.csv。已上传的文件都在 /workspace/uploads/ 下。"``;
        None when the sentence is none we know (show it as it came).
    """
    text = reason.strip()
    for template, key in _OURS:
        values = read_back(template, text, stop=".")
        if values is not None:
            return t(key, lang, **{name: value.strip("'\"") for name, value in values.items()})
    for pattern, key in _DEEPAGENTS:
        match = pattern.match(text)
        if match is not None:
            return t(key, lang, **match.groupdict())
    return None
