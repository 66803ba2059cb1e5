"""The demo tools: current_time, calculate (safe arithmetic) and knowledge_search, plus the demo skill."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from langchain_core.messages import ToolMessage

from ventapp.tools import demo_tools, registry
from ventapp.tools.demo_tools import evaluate

SKILL_FILE = Path(__file__).resolve().parents[2] / "skills" / "ventilation-calc" / "SKILL.md"


@pytest.fixture(autouse=True)
def builtins_loaded() -> None:
    registry.load_builtin_tools()


def _invoke(name: str, **args: object) -> ToolMessage:
    tool = registry.get_tools_by_name([name])[0]
    message = tool.invoke({"type": "tool_call", "id": "c1", "name": name, "args": args})
    assert isinstance(message, ToolMessage)
    return message


# --- current_time ---------------------------------------------------------------------------------


def test_current_time_gives_shanghai_and_utc_with_offsets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo_tools, "_now", lambda: datetime(2025, 1, 1, 23, 30, 5, 123456, tzinfo=UTC))
    text = demo_tools.current_time()
    assert "Asia/Shanghai: 2025-01-02T07:30:05+08:00" in text
    assert "UTC: 2025-01-01T23:30:05+00:00" in text


def test_current_time_tool_output_parses_as_iso_8601() -> None:
    message = _invoke("current_time")
    assert message.status == "success"
    stamps = re.findall(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}", message.content)
    assert len(stamps) == 2
    local, utc = (datetime.fromisoformat(s) for s in stamps)
    assert local.utcoffset().total_seconds() == 8 * 3600
    assert utc.utcoffset().total_seconds() == 0
    assert local == utc


# --- calculate ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("(12+8)*3", "60"),
        ("2^10", "1024"),
        ("2+3^2", "11"),  # ^ is power with power precedence, not XOR
        ("2**10", "1024"),
        ("-3 + 5", "2"),
        ("-(2)", "-2"),
        ("10/4", "2.5"),
        ("120/2", "60"),
        ("1/3", "0.3333333333"),
        ("0.1+0.2", "0.3"),
        ("7//2", "3"),
        ("7 % 3", "1"),
        ("sqrt(16)", "4"),
        ("2**0.5", "1.414213562"),
        ("round(2.567, 2)", "2.57"),
        ("round(2.5)", "2"),
        ("max(1, 5, 3)", "5"),
        ("min(2, 3)", "2"),
        ("abs(-4)", "4"),
        ("log10(1000)", "3"),
        ("log(e)", "1"),
        ("log(8, 2)", "3"),
        ("exp(0)", "1"),
        ("sin(0)", "0"),
        ("cos(pi)", "-1"),
        ("tan(0)", "0"),
        ("-0.0", "0"),
        ("100*2.5*1.5/60", "6.25"),
        ("0.012*14*1000/12**3", "0.09722222222"),
        ("10**15", "1e+15"),
        ("999999999999999", "999999999999999"),
        ("3 × 4 ÷ 2", "6"),
        ("（12+8）×3", "60"),  # try21: a Chinese input method's full-width brackets
        ("１２＋３　*　２", "18"),  # full-width digits, plus and the ideographic space
    ],
)
def test_calculate_evaluates_arithmetic(expression: str, expected: str) -> None:
    assert demo_tools.calculate(expression) == expected


def test_calculate_tool_returns_the_number_as_content() -> None:
    message = _invoke("calculate", expression="(12+8)*3")
    assert (message.status, message.content) == ("success", "60")


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("1/0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("0**-1", "zero cannot be raised"),
        ("x + 1", "unknown name 'x'"),
        ("pi.real", "attribute access"),
        ("(1).__class__", "attribute access"),
        ("__import__('os')", "unknown function '__import__'"),
        ("open('x')", "unknown function 'open'"),
        ("'a' * 3", "only numbers"),
        ("True + 1", "only numbers"),
        ("[1, 2]", "'List' is not allowed"),
        ("1 if 1 else 2", "'IfExp' is not allowed"),
        ("1 < 2", "'Compare' is not allowed"),
        ("max(*[1, 2])", "not allowed"),
        ("round(2.5, ndigits=1)", "positional arguments only"),
        ("9**9**9", "too large"),
        ("99999**99999", "too large"),
        ("10**400", "too large"),
        ("exp(1000)", "too large"),
        ("1e308 * 10", "not a finite number"),
        ("(-8)**(1/3)", "not a real number"),
        ("sqrt(-1)", "math domain error"),
        ("round(5, -1000000000)", "between -15 and 15"),
        ("", "empty"),
        ("2 +", "not a valid arithmetic expression"),
        ("1; 2", "not a valid arithmetic expression"),
        ("1" * 501, "longer than 500"),
    ],
)
def test_calculate_refuses_with_a_readable_error_message(expression: str, reason: str) -> None:
    message = _invoke("calculate", expression=expression)
    assert message.status == "error"
    assert message.content.startswith("Tool 'calculate' failed: ")
    assert reason in message.content


def test_huge_powers_are_refused_quickly() -> None:
    start = time.perf_counter()
    for expression in ("9**9**9", "3999999**3999999", "(10**300)**(10**300)"):
        with pytest.raises(ValueError, match="too large"):
            evaluate(expression)
    assert time.perf_counter() - start < 1.0


# --- knowledge_search -----------------------------------------------------------------------------


def test_knowledge_search_returns_sourced_json_ranked_by_score() -> None:
    message = _invoke("knowledge_search", query="fan laws affinity speed", limit=3)
    assert message.status == "success"
    payload = json.loads(message.content)
    assert set(payload) == {"data", "sources"}
    data, sources = payload["data"], payload["sources"]
    assert 1 <= len(data) <= 3 and len(sources) == len(data)
    assert data[0]["doc_id"] == "fan-laws"
    assert all(set(item) == {"title", "doc_id", "excerpt", "score"} for item in data)
    scores = [item["score"] for item in data]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    for item, src in zip(data, sources, strict=True):
        assert src == {
            "title": item["title"],
            "url": f"/kb/{item['doc_id']}",
            "snippet": item["excerpt"],
            "score": item["score"],
        }
    # The UI/agent side recovers exactly these citations from the ToolMessage content.
    assert registry.parse_sourced(message.content) == sources


def test_knowledge_search_keeps_chinese_readable_in_the_json() -> None:
    message = _invoke("knowledge_search", query="瓦斯", limit=1)
    assert "瓦斯" in message.content  # ensure_ascii=False
    assert json.loads(message.content)["data"][0]["doc_id"] == "gas-limits"


@pytest.mark.parametrize(("limit", "expected_max"), [(0, 1), (-5, 1), (1, 1), (100, 10)])
def test_knowledge_search_clamps_limit(limit: int, expected_max: int) -> None:
    payload = demo_tools.knowledge_search("ventilation air velocity methane fan dust tunnel", limit=limit)
    assert 1 <= len(payload["data"]) <= expected_max
    if expected_max == 10:
        assert len(payload["data"]) == 10  # every document mentions at least one of these words


@pytest.mark.parametrize("query", ["", "   ", "xyzzy plugh", "the of and"])
def test_knowledge_search_without_hits_is_an_empty_sourced_result(query: str) -> None:
    message = _invoke("knowledge_search", query=query)
    assert message.status == "success"
    payload = json.loads(message.content)
    assert payload["data"] == [] and payload["sources"] == []
    assert payload["note"]
    assert registry.parse_sourced(message.content) == []


# --- the demo skill -------------------------------------------------------------------------------


def test_ventilation_calc_skill_front_matter_follows_the_deepagents_format() -> None:
    text = SKILL_FILE.read_text(encoding="utf-8")
    match = re.match(r"^---\s*\n(.*?)\n---\s*\n", text, re.DOTALL)
    assert match, "SKILL.md must start with a --- YAML front matter block"
    meta = yaml.safe_load(match.group(1))
    assert meta["name"] == SKILL_FILE.parent.name == "ventilation-calc"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"])
    assert 50 < len(meta["description"]) <= 1024
    body = text[match.end() :]
    # The procedure names the registered tools it relies on.
    for tool in ("calculate", "knowledge_search"):
        assert f"`{tool}" in body and registry.get_spec(tool) is not None


@pytest.mark.parametrize("expression", ["1/0", "2 +", "x + 1", "sqrt(-1)"])
def test_a_calculators_failure_reads_in_the_persons_language_and_tells_the_model_why(expression: str) -> None:
    """A Chinese card read "division by zero in '1/0'" (the evaluator's English, try13)."""
    from ventapp.agent.tool_failure_words import failure_for_person
    from ventapp.tools import run_language

    run_language.set_language_resolver(lambda: "zh-CN")
    try:
        message = _invoke("calculate", expression=expression)
    finally:
        run_language.set_language_resolver(None)
    assert message.status == "error" and "[bad_expression]" in message.content
    card = failure_for_person(message.content, "zh-CN")
    assert card.startswith("这个算式无法计算") and not any(c.isascii() and c.isalpha() for c in card), card
    english = failure_for_person(message.content, "en")
    assert english, "the English card still reads something"
