"""The calculation tools' citations and rule sentences speak the run's language (formulas and books stay)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ventapp.domain.regulations import ALL_ROWS, VELOCITY_LIMITS
from ventapp.tools import run_language, workspace_files
from ventapp.tools import ventilation_tools as vt
from ventapp.tools.network_tool import solve_ventilation_network

_CJK = re.compile(r"[\u4e00-\u9fff]")
BOOKS = re.compile(
    r"McPherson|Subsurface Ventilation Engineering|Thakur|Advanced Mine Ventilation|Tien|"
    r"Practical Mine Ventilation Engineering|mine-ventilation-network-benchmark|Hartman"
)
"""Authors and book titles a Chinese citation may keep in English."""
FAN_NETWORK = (
    "edge_id,from,to,r_N_s2_m8,is_fan,a0_Pa,a1_Pa_s_m3,a2_Pa_s2_m6,area_m2,airway_type\n"
    "f,1,2,0.05,1,200,30,-0.8,10,main_airway\n"
    "a,2,3,0.3,0,,,,10,district_airway\n"
    "b,1,3,0.3,0,,,,100,district_airway\n"
    "c,3,4,0.3,0,,,,10,district_airway\n"
)


@pytest.fixture
def speaking(tmp_path: Path) -> Iterator[Callable[[str], None]]:
    """``speaking("en")`` makes the run English (zh-CN without it); a workspace with a fan network."""
    chosen: dict[str, str | None] = {"lang": None}
    run_language.set_language_resolver(lambda: chosen["lang"])
    root = tmp_path / "ws"
    (root / "uploads").mkdir(parents=True)
    (root / "uploads" / "fan.csv").write_text(FAN_NETWORK, encoding="utf-8")
    workspace_files.set_workspace_resolver(lambda: root)
    yield lambda lang: chosen.__setitem__("lang", lang)
    run_language.set_language_resolver(None)
    workspace_files.set_workspace_resolver(None)


def _results() -> list[dict]:
    return [
        vt.airway_resistance(1000, 12, 14, airway_type="shaft.brick"),
        vt.airway_resistance(1000, 12, 14, friction_factor_kg_m3=0.012),
        vt.combine_resistances([0.4, 0.1], "parallel"),
        vt.fan_laws_scale(speed_ratio=0.9, flow=100),
        vt.fan_operating_point(200, 30, -0.8, 0.3),
        vt.natural_ventilation_pressure(500, 1.25, 1.2),
        vt.airflow_demand(
            people=50,
            methane_emission_m3_min=2,
            methane_unevenness_k=1.5,
            area_m2=10,
            airway_type="coal_face",
        ),
        vt.check_air_velocity(10, 10, "coal_face"),
        solve_ventilation_network("/workspace/uploads/fan.csv", 12.0),
    ]


def _person_texts(result: dict) -> list[str]:
    """Citation snippets, and the rule sentences a person sees in the expanded card."""
    texts = [s["snippet"] for s in result["sources"]]
    data = result["data"]
    rules = [data.get("rule")] + [r.get("rule") for r in data.get("requirements", [])]
    texts += [text for rule in rules if rule for text in (rule["citation"], rule["status"])]
    texts += [finding["rule"] for finding in data.get("low_velocity", []) + data.get("high_velocity", [])]
    return texts


def test_a_chinese_runs_calculation_citations_carry_no_english_prose(speaking: Callable[[str], None]) -> None:
    """A Chinese user read "Series: R = ΣRᵢ; parallel: …" and "《煤矿安全规程》 (article numbers not confirmed)"."""
    texts = [text for result in _results() for text in _person_texts(result)]
    assert len(texts) >= 14
    for text in texts:
        assert _CJK.search(text), text
        assert not re.search(r"[A-Za-z]{4,}", BOOKS.sub("", text)), text
    joined = " ".join(texts)
    for fact in (
        "1/√R = Σ1/√Rᵢ",
        "Q = 100·q_CH4·k",
        "AQ 1056-2008",
        "§5.2–5.4",
        "表 4-3（NCB 1979）",
        "CC BY 4.0",
        "§6.4",
    ):
        assert fact in joined, fact
    assert "条款号未核实" in joined and "2016 年版" in joined


def test_an_english_runs_citations_keep_their_english_and_facts(speaking: Callable[[str], None]) -> None:
    speaking("en")
    texts = [text for result in _results() for text in _person_texts(result)]
    for text in texts:
        assert not _CJK.search(text.replace("煤矿安全规程", "").replace("煤矿通风能力核定标准", "")), text
    joined = " ".join(texts)
    assert "Series: R = ΣRᵢ; parallel: 1/√R = Σ1/√Rᵢ" in joined and "article number not confirmed" in joined
    assert (
        "shaft, brick-lined, unobstructed" in joined and "Not yet checked against the official text" in joined
    )


def test_every_regulation_row_is_worded_in_both_languages() -> None:
    """Status and citation of each row, by its id: Chinese words; the English is the domain's own."""
    from ventapp.tools.citations import rule_citation, rule_status

    for row in ALL_ROWS:
        assert rule_citation(row, "en") == row.citation and rule_status(row, "en") == row.status
        zh = rule_citation(row, "zh-CN") + rule_status(row, "zh-CN")
        assert _CJK.search(zh) and not re.search(r"[A-Za-z]{4,}", zh), zh
        assert row.standard in zh
    checked = VELOCITY_LIMITS["coal_face"].__class__(
        **{**VELOCITY_LIMITS["coal_face"].__dict__, "article": "136", "verified": True}
    )
    assert "第 136 条" in rule_citation(checked, "zh-CN") and "已对照" in rule_status(checked, "zh-CN")
    assert rule_status(checked, "en") == checked.status


def test_every_friction_table_row_is_worded_in_both_languages() -> None:
    """The English citation is the table's own text; the Chinese keeps the book, chapter and table."""
    from ventapp.domain.airways import FRICTION_FACTORS
    from ventapp.tools.citations import friction_source

    for factor in FRICTION_FACTORS.values():
        assert friction_source(factor, "en") == f"{factor.description} — {factor.source}"
        zh = friction_source(factor, "zh-CN")
        assert _CJK.search(zh) and not re.search(r"[A-Za-z]{4,}", BOOKS.sub("", zh)), zh
        assert re.search(r"表 \d[-.]\d", zh), zh
