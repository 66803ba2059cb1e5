"""The knowledge base in two languages: the sets stay in step, Chinese search, citations per run language."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ventapp.tools import demo_tools, knowledge, registry, run_language
from ventapp.tools.knowledge import (
    DEFAULT_KB_DIR,
    KnowledgeBase,
    KnowledgeDoc,
    get_document,
    get_index,
    kb_folder,
    load_documents,
    paragraphs,
    search,
)

ZH_DIR = kb_folder("zh-CN")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")

NUMBER_EXCEPTIONS: dict[str, set[str]] = {}
"""doc_id -> numbers of the English document its Chinese twin may leave out (e.g. one inside an
English book title that the translation names differently). Empty: every number is kept."""

BOOKS = (
    "Subsurface Ventilation Engineering",
    "Mine Ventilation and Air Conditioning",
    "On the Theory of the Ventilation of Mines",
    "Numerical Optimization",
    "Industrial fans — Performance testing using standardized airways",
    "Standard for Road Tunnels, Bridges, and Other Limited Access Highways",
)
"""Foreign books and standards the Chinese documents cite by their English titles."""
CHINESE_STANDARDS = ("煤矿安全规程", "煤矿通风能力核定标准", "公路隧道通风设计细则", "矿井通风与安全")
"""Chinese standards and textbooks, cited in the Chinese documents as 《name》."""
TRANSLITERATED = {"Atkinson": "阿特金森"}
_CODES = re.compile(
    r"\d+ CFR [\d.]+|CFR Part \d+|NFPA \d+|ISO \d+|GBZ [\d.]+|AQ \d+-\d+|JTG/T D70/2-02—2014|"
    r"McPherson|Hartman et al\.|Atkinson|Nocedal|PIARC|MSHA|CC BY 4\.0|https://\S+?(?=[,)）\s]|$)"
)


def _numbers(text: str) -> set[str]:
    # NFKC so that m³, Q₂ and 10⁻⁶ compare as m3, Q2 and 10-6 in both languages.
    return set(_NUMBER.findall(unicodedata.normalize("NFKC", text)))


def _pairs() -> list[tuple[KnowledgeDoc, KnowledgeDoc]]:
    zh = {d.doc_id: d for d in load_documents(ZH_DIR, "zh-CN")}
    return [(en, zh[en.doc_id]) for en in load_documents() if en.doc_id in zh]


PAIRS = _pairs()


@pytest.fixture
def speaking() -> Iterator[Callable[[str], None]]:
    """``speaking("en")`` makes the tools' run language English for the test (zh-CN without it)."""
    chosen: dict[str, str | None] = {"lang": None}
    run_language.set_language_resolver(lambda: chosen["lang"])
    yield lambda lang: chosen.__setitem__("lang", lang)
    run_language.set_language_resolver(None)


# --- the two sets stay in step ---------------------------------------------------------------------


def test_every_document_exists_in_both_languages() -> None:
    english = sorted(p.stem for p in DEFAULT_KB_DIR.glob("*.md"))
    chinese = sorted(p.stem for p in ZH_DIR.glob("*.md"))
    assert english == chinese and len(english) == 11
    assert len(PAIRS) == len(english)


@pytest.mark.parametrize(("en", "zh"), PAIRS, ids=[en.doc_id for en, _ in PAIRS])
def test_the_chinese_twin_is_chinese_well_formed_and_cites_the_same_sources(
    en: KnowledgeDoc, zh: KnowledgeDoc
) -> None:
    assert zh.lang == "zh-CN" and en.lang == "en" and zh.url == en.url == f"/kb/{en.doc_id}"
    assert (ZH_DIR / f"{zh.doc_id}.md").read_text(encoding="utf-8").startswith(f"# {zh.title}\n")
    assert _CJK.search(zh.title) and not re.search(r"[A-Za-z]{4,}", zh.title)
    assert 1200 <= len(zh.text) <= 3000, f"{zh.doc_id} has {len(zh.text)} characters"
    assert len(_CJK.findall(zh.text)) > len(re.findall(r"[A-Za-z]", zh.text))
    for cited in set(_CODES.findall(en.text)):
        # "Atkinson's law" reads 阿特金森定律 in Chinese; his book keeps its English title.
        assert cited in zh.text or TRANSLITERATED.get(cited, "?") in zh.text, f"{zh.doc_id} drops {cited!r}"
    for book in BOOKS:
        assert (book in en.text) == (book in zh.text), f"{zh.doc_id}: {book}"
    for name in CHINESE_STANDARDS:
        if name in en.text:
            assert f"《{name}》" in zh.text, f"{zh.doc_id} should cite 《{name}》"


@pytest.mark.parametrize(("en", "zh"), PAIRS, ids=[en.doc_id for en, _ in PAIRS])
def test_every_number_of_the_english_document_is_in_its_chinese_twin(
    en: KnowledgeDoc, zh: KnowledgeDoc
) -> None:
    missing = _numbers(f"{en.title}\n{en.text}") - _numbers(f"{zh.title}\n{zh.text}")
    assert missing <= NUMBER_EXCEPTIONS.get(en.doc_id, set()), f"{zh.doc_id} lacks {sorted(missing)}"


@pytest.mark.parametrize(("en", "zh"), PAIRS, ids=[en.doc_id for en, _ in PAIRS])
def test_paragraphs_line_up_with_the_same_numbers(en: KnowledgeDoc, zh: KnowledgeDoc) -> None:
    """Excerpts rely on it (an English query picks a Chinese paragraph); no figure added or lost."""
    en_paras, zh_paras = paragraphs(en.text), paragraphs(zh.text)
    assert len(en_paras) == len(zh_paras)
    headings = [re.findall(r"^#+ ", text, re.M) for text in (en.text, zh.text)]
    assert headings[0] == headings[1]
    exceptions = NUMBER_EXCEPTIONS.get(en.doc_id, set())
    for i, (english, chinese) in enumerate(zip(en_paras, zh_paras, strict=True)):
        assert _numbers(english) - exceptions <= _numbers(chinese), f"{en.doc_id} paragraph {i}: {chinese}"
        assert _numbers(chinese) <= _numbers(english), f"{en.doc_id} paragraph {i} adds a number"


def test_a_missing_number_is_caught() -> None:
    """The check itself: a translation that drops "0.75%" fails it."""
    en, zh = next((en, zh) for en, zh in PAIRS if en.doc_id == "gas-limits")
    assert "0.75" in _numbers(en.text) and "0.75" not in _numbers(zh.text.replace("0.75%", "百分之零点七五"))


# --- search in Chinese -----------------------------------------------------------------------------


CHINESE_QUESTIONS = [
    ("瓦斯浓度限值", "gas-limits"),
    ("回风巷瓦斯浓度限值是多少？", "gas-limits"),
    ("局部通风机", "auxiliary-ventilation"),
    ("局部通风机 循环风", "auxiliary-ventilation"),
    ("风机工况点", "fan-operating-point"),
    ("通风机串联和并联", "fan-operating-point"),
    ("风速上限", "air-velocity-limits"),
    ("采煤工作面最高风速", "air-velocity-limits"),
    ("自然风压", "natural-ventilation"),
    ("等积孔", "atkinson-resistance"),
    ("通风阻力 风阻", "atkinson-resistance"),
    ("隧道通风", "tunnel-ventilation"),
    ("射流风机 临界风速", "tunnel-ventilation"),
    ("需风量计算", "air-requirements"),
    ("每人每分钟风量", "air-requirements"),
    ("通风网络解算", "network-analysis"),
    ("相似定律 转速", "fan-laws"),
    ("呼吸性粉尘 接触限值", "dust-control"),
]


@pytest.mark.parametrize(("query", "doc_id"), CHINESE_QUESTIONS)
def test_chinese_questions_find_their_chinese_document_first(query: str, doc_id: str) -> None:
    assert get_index("zh-CN").search(query, 3)[0].doc.doc_id == doc_id  # the Chinese set alone
    top = search(query, 3, lang="zh-CN")[0]
    assert (top.doc.doc_id, top.doc.lang) == (doc_id, "zh-CN")
    assert _CJK.search(top.excerpt)


@pytest.mark.parametrize(
    ("query", "doc_id"),
    [
        ("fan laws", "fan-laws"),
        ("methane limit in return air", "gas-limits"),
        ("CH4 concentration", "gas-limits"),
        ("Atkinson square law resistance", "atkinson-resistance"),
        ("forcing exhaust duct heading", "auxiliary-ventilation"),
        ("jet fan critical velocity backlayering", "tunnel-ventilation"),
        ("fans in series and parallel operating point", "fan-operating-point"),
        ("maximum air velocity coal face", "air-velocity-limits"),
        ("natural ventilation pressure winter", "natural-ventilation"),
    ],
)
@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_english_questions_find_the_same_document_in_either_language(
    query: str, doc_id: str, lang: str
) -> None:
    """Models often search in English for a Chinese user: the Chinese run still gets the document."""
    top = search(query, 3, lang=lang)[0]
    assert (top.doc.doc_id, top.doc.lang) == (doc_id, lang)


def test_an_english_query_in_a_chinese_run_gets_the_matching_chinese_paragraph() -> None:
    top = search("methane limit main return 0.75%", 1, lang="zh-CN")[0]
    assert top.doc.doc_id == "gas-limits" and "矿井总回风巷" in top.excerpt and "0.75%" in top.excerpt


def test_the_chinese_methane_question_gets_the_chinese_limits_list() -> None:
    """The tester's question (try10) in the Chinese set: the list of limits, as plain text."""
    top = search("什么是回风巷的瓦斯浓度限值？", 1, lang="zh-CN")[0]
    assert top.doc.doc_id == "gas-limits"
    assert top.excerpt.startswith("采掘工作面的进风流") and "1.0%" in top.excerpt
    assert "-" not in top.excerpt[:2] and "**" not in top.excerpt


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("反风要求", "反风设施必须能在 10 min 内"),
        ("二氧化碳 1.5%", "CO2 浓度超过 1.5%"),
        ("冬季自然风压", "冬季：寒冷、密度大的地面空气"),
    ],
)
def test_a_chinese_excerpt_is_the_paragraph_on_the_question(query: str, expected: str) -> None:
    """Counting every occurrence let a common character (风 dozens of times in a long paragraph)
    outweigh the rare term: "反风要求" showed the paragraph on fans in series."""
    assert expected in search(query, 1, lang="zh-CN")[0].excerpt


def test_a_long_chinese_paragraph_is_cut_to_a_full_excerpt_not_at_a_distant_space() -> None:
    paragraph = "瓦斯" * 40 + " CH4 ≤ 0.5% " + "风量" * 200 + "自然风压" + "通风" * 300
    excerpt = knowledge.make_excerpt(KnowledgeDoc("x", "X", paragraph, "/kb/x"), ["自然风压"])
    assert "自然风压" in excerpt and excerpt.startswith("…") and excerpt.endswith("…")
    assert knowledge.EXCERPT_CHARS - 5 <= len(excerpt) <= knowledge.EXCERPT_CHARS + 2


# --- documents and citations per language ----------------------------------------------------------


def test_get_document_gives_either_language_with_the_same_id_and_url() -> None:
    english, chinese = get_document("gas-limits", "en"), get_document("gas-limits", "zh-CN")
    assert english.url == chinese.url == "/kb/gas-limits"
    assert english.title.startswith("Mine Gas Limits") and chinese.title.startswith("矿井气体浓度限值")
    assert get_document("gas-limits") == english  # the original by default
    with pytest.raises(ValueError, match="language"):
        get_document("gas-limits", "fr")


def test_a_document_without_translation_comes_in_english(tmp_path: Path) -> None:
    (tmp_path / "zh-CN").mkdir()
    (tmp_path / "only-en.md").write_text("# Only English\n\nMethane text.\n", encoding="utf-8")
    (tmp_path / "both.md").write_text("# Both\n\nMethane here.\n", encoding="utf-8")
    (tmp_path / "zh-CN" / "both.md").write_text("# 两者\n\n这里有瓦斯。\n", encoding="utf-8")
    base = KnowledgeBase.from_folder(tmp_path)
    assert base.get("only-en", "zh-CN").lang == "en" and base.get("both", "zh-CN").title == "两者"
    hits = base.search("methane", 5, lang="zh-CN")
    assert {(h.doc.doc_id, h.doc.lang) for h in hits} == {("only-en", "en"), ("both", "zh-CN")}
    assert KnowledgeBase.from_folder(tmp_path / "zh-CN").index("zh-CN").docs == []  # no translations


def test_a_chinese_runs_citations_are_chinese_and_an_english_runs_english(
    speaking: Callable[[str], None],
) -> None:
    """A Chinese user saw English citation titles and snippets for "回风巷瓦斯浓度限值是多少？"."""
    registry.load_builtin_tools()
    chinese = demo_tools.knowledge_search("回风巷瓦斯浓度限值是多少？", limit=2)  # zh-CN: no UI language
    speaking("en")
    english = demo_tools.knowledge_search("回风巷瓦斯浓度限值是多少？", limit=2)
    for payload in (chinese, english):
        assert payload["sources"][0]["url"] == "/kb/gas-limits"
        assert json.loads(json.dumps(payload)) == payload
    zh_source, en_source = chinese["sources"][0], english["sources"][0]
    assert zh_source["title"] == get_document("gas-limits", "zh-CN").title
    assert _CJK.search(zh_source["snippet"]) and not re.search(r"[A-Za-z]{5,}", zh_source["snippet"])
    assert en_source["title"] == get_document("gas-limits", "en").title
    assert "Intake air of a coal or development face" in en_source["snippet"]
    assert chinese["data"][0]["excerpt"] == zh_source["snippet"]


def test_calculation_tools_title_their_knowledge_citations_in_the_run_language(
    speaking: Callable[[str], None],
) -> None:
    """The engineering tools cited "Fan laws" & co. in English in a Chinese run."""
    from ventapp.tools import ventilation_tools as vt

    def cited() -> dict[str, str]:
        results = [
            vt.airway_resistance(1000, 12, 14, friction_factor_kg_m3=0.012),
            vt.fan_laws_scale(speed_ratio=0.9, flow=100, pressure=2000, power_kw=300),
            vt.natural_ventilation_pressure(500, 1.25, 1.2),
        ]
        return {s["url"]: s["title"] for result in results for s in result["sources"]}

    chinese = cited()
    speaking("en")
    english = cited()
    assert (
        chinese.keys()
        == english.keys()
        == {"/kb/atkinson-resistance", "/kb/fan-laws", "/kb/natural-ventilation"}
    )
    for url, title in chinese.items():
        doc_id = url.removeprefix("/kb/")
        assert (
            title == get_document(doc_id, "zh-CN").title and english[url] == get_document(doc_id, "en").title
        )
