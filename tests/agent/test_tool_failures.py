"""A workspace tool's failure on its card reads in the person's language (the model keeps the English).

Testers saw ``/workspace/uploads/none.csv does not exist; …`` (our workspace file access) and
``Error: File '/uploads/none.csv' not found`` (deepagents' file tools) on the header and body of
a card in the Chinese UI: failures without a ``[code]``, which the card showed as the model got them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ventapp.agent import events as ev
from ventapp.agent.tool_failure_words import failure_for_person
from ventapp.i18n import t
from ventapp.state.live_answer import LiveAnswer, reduce_event
from ventapp.state.tool_summary import tool_summary
from ventapp.state.views import tool_card_from_dict
from ventapp.tools import registry, workspace_files
from ventapp.tools.refused import refusal_text

LATIN_WORDS = re.compile(r"\b(?:does|not|exist|found|Error|File|Path|String|allowed|permission)\b")
"""English words a Chinese sentence must not show (paths and numbers may stay)."""


def _failed(tmp_path: Path, path: str) -> str:
    """What the registered network solver returns to the model for ``path``."""
    (tmp_path / "uploads").mkdir(exist_ok=True)
    workspace_files.set_workspace_resolver(lambda: tmp_path)
    try:
        registry.load_builtin_tools()
        (tool,) = registry.get_tools_by_name(["solve_ventilation_network"])
        call = {"name": tool.name, "args": {"path": path}, "id": "c", "type": "tool_call"}
        message = tool.invoke(call)
    finally:
        workspace_files.set_workspace_resolver(None)
    assert message.status == "error"
    return str(message.content)


def test_a_missing_upload_reads_in_chinese_on_the_card_live_and_reloaded(tmp_path: Path) -> None:
    content = _failed(tmp_path, "/workspace/uploads/none.csv")
    assert "/workspace/uploads/none.csv does not exist; list /workspace/uploads/" in content, "the model's"
    live = reduce_event(
        LiveAnswer(lang="zh-CN"),
        ev.ToolResult(
            tool="solve_ventilation_network", cn_tool="", content=content, tool_call_id="c", error=True
        ),
    )
    stored = tool_card_from_dict(
        {"tool_call_id": "c", "tool": "solve_ventilation_network", "content": content, "error": True}, "zh-CN"
    )
    card = live.tools[0]
    assert card.summary == stored.summary and card.content == stored.content
    # The solver refuses a missing upload with its own code (``not_found``, worded in the run's
    # language); the path is in the model's detail.
    for text in (card.summary, card.content):
        assert text == "找不到这个拓扑文件：请确认文件已上传，再让智能体解算。" and not LATIN_WORDS.search(
            text
        ), text
    english = failure_for_person(content, "en")
    assert "/workspace/uploads/none.csv does not exist" in english and "Tool '" not in english


@pytest.mark.parametrize(
    "path", ["", "/workspace/../../etc/passwd"], ids=["no path", "leaving the workspace"]
)
def test_the_other_workspace_refusals_read_in_chinese(tmp_path: Path, path: str) -> None:
    content = _failed(tmp_path, path)
    text = failure_for_person(content, "zh-CN")
    assert not LATIN_WORDS.search(text) and re.search(r"[\u4e00-\u9fff]", text), text


DEEPAGENTS_FAILURES = [
    # As deepagents' file tools answer through our backend (``/workspace/`` is a route: its prefix is gone).
    ("Error: File '/uploads/none.csv' not found", "/uploads/none.csv"),
    ("Error: Path '/nofolder': path_not_found", "/nofolder"),
    ("Error: Path '/a.txt': not_a_directory", "/a.txt"),
    ("Error: String not found in file: 'zz'", ""),
    (
        "Error: String 'x' appears 2 times in file. Use replace_all=True to replace all instances, "
        "or provide a more specific string with surrounding context.",
        "2",
    ),
    ("Error: parallel file mutations to the same path are not allowed.", ""),
    ("Error: Path traversal not allowed: /workspace/../etc/passwd", ""),
    ("Error: Path traversal not allowed in glob pattern '../*'", ""),
    ("Error: permission denied for write on /skills/x.md", "/skills/x.md"),
    ("Error: Line offset 100 exceeds file length (1 lines)", "100"),
]


@pytest.mark.parametrize(("content", "kept"), DEEPAGENTS_FAILURES)
def test_deepagents_file_tool_failures_read_in_chinese(content: str, kept: str) -> None:
    for text in (failure_for_person(content, "zh-CN"), tool_summary(content, "zh-CN", "read_file")):
        assert not LATIN_WORDS.search(text) and re.search(r"[\u4e00-\u9fff]", text), text
        assert kept in text
    english = failure_for_person(content, "en")
    assert not english.startswith("Error:") and kept in english, english


def test_an_unknown_failure_is_shown_as_it_came() -> None:
    assert failure_for_person("Error: the disk is on fire", "zh-CN") == "Error: the disk is on fire"


def test_a_call_of_a_tool_the_agent_lacks_is_worded_for_the_person() -> None:
    """try15: the card showed LangGraph's "Error: fan_curve_lookup is not a valid tool, try one of [ls, …]"."""
    content = "Error: fan_curve_lookup is not a valid tool, try one of [ls, read_file, calculate]."
    assert (
        failure_for_person(content, "zh-CN")
        == "智能体调用了一个它没有的工具（fan_curve_lookup）；已告诉它有哪些工具可用。"
    )
    assert "fan_curve_lookup" in failure_for_person(content, "en") and "ls" not in failure_for_person(
        content, "en"
    )


def test_a_refusal_worded_in_one_language_reads_in_the_other_with_its_values() -> None:
    """try20: a refusal from a Chinese run read in an English UI (or the history in English) showed
    only the model's English detail; an English one read in Chinese stayed English."""
    zh = "Tool 'airway_velocity' failed: " + refusal_text(
        "unknown_airway_type", t("tool.refused.unknown_airway_type", "zh-CN", name="斜巷"), "no such type"
    )
    assert failure_for_person(zh, "en") == (
        t("tool.refused.unknown_airway_type", "en", name="斜巷") + " (no such type)"
    )
    en = "Tool 'airway_velocity' failed: " + refusal_text(
        "unknown_airway_type", t("tool.refused.unknown_airway_type", "en", name="ramp"), "no such type"
    )
    assert failure_for_person(en, "zh-CN") == t("tool.refused.unknown_airway_type", "zh-CN", name="ramp")
    same = "Tool 'calculate' failed: " + refusal_text("bad_expression", "自己的话", "1/0")
    assert failure_for_person(same, "en") == "1/0", "a sentence no template made stays as before"
