"""A refused network file says in Chinese which row, airway, node or value is wrong (not only the English detail)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ventapp.agent.tool_failure_words import failure_for_person
from ventapp.domain.network import Airway, Network, NetworkError
from ventapp.tools import run_language, workspace_files
from ventapp.tools.network_tool import refusal, solve_ventilation_network
from ventapp.tools.refused import Refused

HEADER = "edge_id,from,to,r_N_s2_m8"


@pytest.fixture
def workspace(tmp_path: Path):
    root = tmp_path / "ws"
    (root / "uploads").mkdir(parents=True)
    workspace_files.set_workspace_resolver(lambda: root)
    run_language.set_language_resolver(lambda: "zh-CN")
    yield root
    run_language.set_language_resolver(None)
    workspace_files.set_workspace_resolver(None)


def _refused(root: Path, text: str, total_flow: float | None = None) -> str:
    (root / "uploads" / "bad.csv").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        solve_ventilation_network("/workspace/uploads/bad.csv", total_flow)
    return str(refused.value)


def _card(message: str) -> str:
    """The sentence a Chinese person reads on the tool card (the registry wraps the tool's message)."""
    return failure_for_person(f"Tool 'solve_ventilation_network' failed: {message}", "zh-CN")


@pytest.mark.parametrize(
    ("code", "text", "total_flow", "named"),
    [
        ("bad_value", f"{HEADER}\nE1,1,2,0.1\nE2,2,3,abc\n", None, ["第 3 行", "风阻", "“abc”"]),
        ("bad_value", f"{HEADER}\nE1,1,2,0.1\nE2,2,3,\n", None, ["第 3 行", "风阻", "空"]),
        ("bad_value", f"{HEADER}\nE1,1,2,inf\n", None, ["第 2 行", "风阻", "inf"]),
        ("bad_value", f"{HEADER}\nE1,1,2,0.1\n,2,3,0.2\n", None, ["第 3 行", "编号"]),
        ("bad_value", f"{HEADER},area_m2\nE1,1,2,0.1,0\n", 10.0, ["“E1”", "断面", "0 m²"]),
        ("unknown_node", f"{HEADER}\nE1,1,2,0.1\nE2,,3,0.2\n", None, ["第 3 行", "“E2”", "起点"]),
        ("negative_resistance", f"{HEADER}\nE1,1,2,0.1\nE2,2,3,-0.5\n", 10.0, ["“E2”", "-0.5 N·s²/m⁸"]),
        ("duplicate_edge", f"{HEADER}\nE1,1,2,0.1\nE1,2,3,0.2\n", 10.0, ["“E1”"]),
        ("self_loop", f"{HEADER}\nE1,1,2,0.1\nE2,N7,N7,0.2\n", 10.0, ["“E2”", "“N7”"]),
        ("no_path", f"{HEADER}\nE1,A,B,0.1\nE2,B,A,0.2\n", 10.0, ["进风节点"]),
        ("no_path", f"{HEADER},fixed_q_m3_s\nE1,A,B,0.1,5\n", 10.0, ["进风节点", "出风节点", "定风量"]),
        (
            "disconnected",
            f"{HEADER},fixed_q_m3_s\nE1,A,B,0.1,\nE2,B,J3,0.1,5\nE3,J3,C,0.1,5\n",
            None,
            ["1 个节点", "J3"],
        ),
    ],
)
def test_a_chinese_refusal_names_what_is_wrong(
    workspace: Path, code: str, text: str, total_flow: float | None, named: list[str]
) -> None:
    message = _refused(workspace, text, total_flow)
    assert message.startswith(f"[{code}] "), message
    card = _card(message)
    for words in named:
        assert words in card, (words, card)
    assert "(" not in card and "the " not in card, card  # the Chinese sentence alone, whole


@pytest.mark.parametrize(
    ("airway", "named"),
    [
        (Airway("E9", "1", "2", math.nan), ["“E9”", "风阻", "nan"]),
        (Airway("E9", "1", "2", 0.1, area_m2=math.inf), ["“E9”", "断面", "inf"]),
        (Airway("E9", " ", "2", 0.1), ["“E9”", "节点"]),
    ],
)
def test_a_network_built_in_code_is_refused_naming_the_airway(airway: Airway, named: list[str]) -> None:
    with pytest.raises(NetworkError) as refused:
        Network((airway,))
    card = _card(refusal(refused.value, "zh-CN"))
    for words in named:
        assert words in card, (words, card)


def test_the_english_sentence_names_them_too(workspace: Path) -> None:
    run_language.set_language_resolver(lambda: "en")
    message = _refused(workspace, f"{HEADER}\nE1,1,2,0.1\nE2,2,3,-0.5\n", 10.0)
    sentence = message.split("] ", 1)[1].split(" (", 1)[0]
    assert "E2" in sentence and "-0.5 N·s²/m⁸" in sentence, sentence


def test_an_id_with_parentheses_still_leaves_the_sentence_whole(workspace: Path) -> None:
    message = _refused(workspace, f"{HEADER}\nE(1),1,2,0.1\nE(1),2,3,0.2\n", 10.0)
    assert "'E(1)'" in message, "the model's English detail keeps the id as written"
    card = _card(message)
    assert "“E(1)”" in card and card.endswith("。"), card  # as the file writes it (try14)
    assert "Airway id" not in card


def test_a_calculators_refusal_of_a_name_with_parentheses_keeps_its_sentence_whole() -> None:
    run_language.set_language_resolver(lambda: "zh-CN")
    try:
        message = str(Refused("unknown_airway_type", "airway_type 'x(y)' is unknown", name="x(y)"))
    finally:
        run_language.set_language_resolver(None)
    card = failure_for_person(f"Tool 'airway_velocity' failed: {message}", "zh-CN")
    assert "“x(y)”" in card and "请选用表中的类型" in card, card
    assert "is unknown" not in card, "the English detail stays the model's"


def test_a_detail_with_unpaired_parentheses_still_leaves_the_sentence_without_it() -> None:
    """A quoted value such as '3)' in the detail: the card falls back to the first " (" (never English)."""
    content = "Tool 'x' failed: [bad_value] 第 3 行的风阻不是数字。 (row 3: r '3)' is not a number)."
    assert failure_for_person(content, "zh-CN") == "第 3 行的风阻不是数字。"
    assert failure_for_person("Tool 'x' failed: [empty] 文件为空。", "zh-CN") == "文件为空。"


def test_no_refusal_sentence_holds_an_ascii_parenthesis() -> None:
    """The card keeps a refusal's sentence up to its first "(": a "(m³/s)" in one cut it short."""
    from ventapp.i18n import MESSAGES

    for lang, catalogue in MESSAGES.items():
        for key, text in catalogue.items():
            if key.startswith(("solver.refused.", "solver.column.", "tool.refused.")):
                assert "(" not in text and ")" not in text, (lang, key, text)


def test_an_english_ui_reads_a_chinese_turns_refusal_by_its_english_detail_alone() -> None:
    """try15: the stored card read "巷道编号“E(1)”出现了不止一次… (Airway id 'E(1)' appears more than once.)."."""
    content = "Tool 'x' failed: [duplicate_id] 巷道编号“E(1)”出现了不止一次。 (Airway id 'E(1)' appears more than once.)."
    assert failure_for_person(content, "en") == "Airway id 'E(1)' appears more than once."
    english = "Tool 'x' failed: [duplicate_id] Airway id “E(1)” appears twice. (row 3)"
    assert failure_for_person(english, "en") == "Airway id “E(1)” appears twice. (row 3)"
