"""Message prefixes ``#skill:`` and ``#session:`` and the installed skills."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import ANY

import pytest

from ventapp.agent.pipeline import ChatRejected, ChatRequest
from ventapp.agent.prefixes import apply_prefixes, known_skills, parse_prefixes


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("size a fan", ("size a fan", None, None)),
        ("#skill:ventilation-calc size a fan", ("size a fan", "ventilation-calc", None)),
        ("#session:abc hi", ("hi", None, "abc")),
        ("  #session:abc   #skill:x  hi there ", ("hi there", "x", "abc")),
        ("#SKILL:x hi", ("hi", "x", None)),
        ("#skill:a #skill:b hi", ("hi", "a", None)),
        ("#skill:", ("", "", None)),
        ("#skill:x", ("", "x", None)),
        ("hi #skill:x", ("hi #skill:x", None, None)),
        ("#skillful idea", ("#skillful idea", None, None)),
        ("#skill:x\nline two", ("line two", "x", None)),
    ],
)
def test_parse_prefixes(message: str, expected: tuple[str, str | None, str | None]) -> None:
    assert parse_prefixes(message) == expected


def test_known_skills_lists_folders_with_skill_md(tmp_path: Path) -> None:
    (tmp_path / "b-skill").mkdir()
    (tmp_path / "b-skill" / "SKILL.md").write_text("---\nname: b\n---\n")
    (tmp_path / "a-skill").mkdir()
    (tmp_path / "a-skill" / "SKILL.md").write_text("---\nname: a\n---\n")
    (tmp_path / "no-manual").mkdir()
    (tmp_path / "stray.md").write_text("x")

    assert known_skills(tmp_path) == ["a-skill", "b-skill"]
    assert known_skills(tmp_path / "missing") == []
    assert "ventilation-calc" in known_skills()


def test_apply_prefixes_sets_skill_and_session() -> None:
    session = "0b6f7a3e-1d2c-4b5a-9e8f-112233445566"
    applied = apply_prefixes(ChatRequest(message=f"#skill:ventilation-calc #session:{session} size it"))
    assert (applied.message, applied.skill, applied.session_id) == ("size it", "ventilation-calc", session)
    same = apply_prefixes(ChatRequest(message=f"#session:{session.upper()} hi", session_id=session))
    assert same.session_id == session.upper()
    assert apply_prefixes(ChatRequest(message="plain")) == ChatRequest(message="plain", trace_id=ANY)


@pytest.mark.parametrize(
    ("message", "session_id", "status", "code"),
    [
        ("#skill:nope hi", None, 400, "unknown_skill"),
        ("#skill: hi", None, 400, "unknown_skill"),
        ("#session: hi", None, 404, "not_found"),
        (
            "#session:0b6f7a3e-1d2c-4b5a-9e8f-112233445566 hi",
            "11111111-2222-4333-8444-555555555555",
            400,
            "bad_request",
        ),
    ],
)
def test_apply_prefixes_refusals(message: str, session_id: str | None, status: int, code: str) -> None:
    with pytest.raises(ChatRejected) as refused:
        apply_prefixes(ChatRequest(message=message, session_id=session_id))
    assert (refused.value.status, refused.value.code) == (status, code)


def test_a_skill_prefix_without_a_name_says_what_goes_after_it() -> None:
    """try14: "#skill: hi" answered "没有名为“”的技能" (an empty name quoted)."""
    with pytest.raises(ChatRejected) as refused:
        apply_prefixes(ChatRequest(message="#skill: hi"))
    assert "“”" not in refused.value.message and "''" not in refused.value.message
    assert "#skill:" in refused.value.message and "ventilation-calc" in refused.value.message


def test_the_installed_skills_are_listed_as_each_language_lists_names() -> None:
    """Tester: a Chinese refusal listed the skills as "ventilation-calc, ventilation-network-analysis"."""
    with pytest.raises(ChatRejected) as refused:
        apply_prefixes(ChatRequest(message="#skill:nope hi"))
    assert "ventilation-calc、ventilation-network-analysis" in refused.value.worded("zh-CN")
    assert "ventilation-calc, ventilation-network-analysis" in refused.value.message, "the English detail"
    assert "ventilation-calc, ventilation-network-analysis" in refused.value.worded("en")
