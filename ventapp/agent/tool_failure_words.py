"""A failed tool's message worded for a person (the model keeps the whole message it got).

:func:`failure_for_person` keeps the reason without the registry's ``Tool '<name>' failed:``
wrapper and without a refusal's ``[code]``; it serves the Reflex tool card (``ventapp.state``) and
the API's ``tool_result`` ``message`` (``ventapp.api.wording``), so both read the same sentence.

Our workspace file access (:mod:`ventapp.tools.workspace_files`, behind the network solver) and
deepagents' file tools (``ls``, ``read_file``, ``write_file``, ``edit_file``, ``glob``, ``grep``)
fail with English sentences and no ``[code]``. Each one we know is matched here to a catalogue id
(``tool.failed.*``), its values (a path, a count) read back from the sentence, so a tool card says
it in the UI language; an unknown failure stays as it came.
"""

from __future__ import annotations

import re

from ventapp.agent.nodeless_middleware import PARALLEL_TODOS_ERROR
from ventapp.i18n import LANGS, MESSAGES, t
from ventapp.i18n.templates import read_back
from ventapp.tools import workspace_files as wf
from ventapp.tools.registry import failure_reason

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


_REFUSAL = re.compile(r"^\[([a-z_]+)\] (.*)$", re.DOTALL)
"""A refusal with a code, ``[code] sentence (detail).`` (``network_tool.refusal``, ``tools.refused``, plus
the registry's stop); :func:`_split_refusal` parts the rest."""


def _split_refusal(rest: str) -> tuple[str, str]:
    """A refusal's ``(sentence, detail)``: ``rest`` parted at the parenthesised English detail that
    ends it (``""`` when there is none).

    The detail is the group whose ")" ends ``rest``, matched back to its own "(" — so an id the
    person wrote with parentheses (``E(1)``) stays in the sentence as written. A detail whose own
    parentheses do not pair up (a quoted value such as ``'3)'``) falls back to the first " (".
    """
    rest = rest[:-1] if rest.endswith(").") else rest  # the registry's wrapper may close with "."
    if rest.endswith(")"):
        depth = 0
        for index in range(len(rest) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(rest[index], 0)
            if depth == 0:
                if index > 0 and rest[index - 1].isspace():
                    return rest[:index].strip(), rest[index + 1 : -1].strip()
                break
        head, sep, detail = rest.partition(" (")
        if sep:
            return head.strip(), detail[:-1].strip()
    return rest.strip(), ""


def _in_language(code: str, sentence: str, lang: str) -> str | None:
    """A refusal's ``sentence``, worded in one language when its turn ran in the other, in ``lang``.

    The tool worded it from its catalogue id (``tool.refused.<code>``, the network solver's
    ``solver.refused.<code>…``) in the run's language; its values are read back from that
    language's template and worded again (try20: a Chinese run read in English showed only the
    evaluator's detail). None when no template of the other language made it.
    """
    for other in LANGS:
        if lang.startswith(other[:2]):
            continue
        for key, template in MESSAGES[other].items():
            if key not in (f"tool.refused.{code}", f"solver.refused.{code}") and not key.startswith(
                f"solver.refused.{code}."
            ):
                continue
            values = read_back(template, sentence)
            if values is not None:
                return t(key, lang, **values)
    return None


_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
"""Chinese (and full-width) characters: a sentence worded for a Chinese UI."""


_UNKNOWN_TOOL = re.compile(r"^Error: (\S+) is not a valid tool, try one of \[.*\]\.?$", re.DOTALL)
"""LangGraph's answer to a call of a tool the agent does not have (``ToolNode``'s ``INVALID_TOOL_NAME_ERROR_TEMPLATE``)."""


_INVALID = re.compile(r"^Tool '[^'\n]*' got invalid arguments: (.*?)\.?$", re.DOTALL)
"""The registry's refusal of arguments that do not fit the tool's schema (``_validation_message``)."""


def failure_for_person(content: str, lang: str) -> str:
    """A failed tool's message as a person reads it in ``lang`` (never raises).

    The model gets the whole message: the registry's ``Tool '<name>' failed:`` wrapper says which
    tool failed, and a refusal's ``[code]`` and English detail name the row or column to fix. A
    person gets the reason without the wrapper and without the code (a machine's word, tester #2)
    and, unless the UI is English, a refusal's localized sentence without the English detail; a file
    tool's failure without a code in the catalogue's words
    (:func:`file_failure_for_person`).

    Args:
        content: A tool message's text, e.g. ``"Tool 'x' failed: [empty] 文件为空。 (a.csv is empty)."``.
        lang: The UI language, e.g. ``"zh-CN"``.

    Returns:
        E.g. ``"文件为空。"``; text that is no failure comes back stripped but otherwise as is.
    """
    reason = failure_reason(content)
    if reason == PARALLEL_TODOS_ERROR:  # langchain's English to the model, not to a person (try14)
        return t("tool.refused.parallel_todos", lang)
    if unknown := _UNKNOWN_TOOL.match(reason):  # langgraph's, with every tool's name (try15)
        return t("tool.refused.unknown_tool", lang, name=unknown.group(1))
    invalid = _INVALID.match(reason)
    if invalid is not None and not lang.startswith("en"):  # pydantic's English, field by field
        fields = "、".join(dict.fromkeys(re.findall(r"(?:^|; )([\w.]+): ", invalid.group(1))))
        return t("tool.refused.invalid_arguments", lang, fields=fields or "?")
    match = _REFUSAL.match(reason)
    if match is None:
        # A file tool's English sentence without a code: the catalogue's, with its path.
        return file_failure_for_person(reason, lang) or reason
    sentence, detail = _split_refusal(match.group(2))
    reworded = _in_language(match.group(1), sentence, lang)
    sentence = reworded or sentence
    if lang.startswith("en"):  # the detail is English too: keep it, not the code
        if reworded is None and _CJK.search(sentence):  # Chinese, and no template to word it again
            return detail or sentence
        return f"{sentence} ({detail})" if detail else sentence
    return sentence
