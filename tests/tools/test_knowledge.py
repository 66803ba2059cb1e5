"""The knowledge base: document invariants, tokeniser and BM25 search (the English set; the Chinese
set and the two together: test_knowledge_i18n.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ventapp.tools import knowledge
from ventapp.tools.knowledge import (
    DEFAULT_KB_DIR,
    KnowledgeDoc,
    KnowledgeIndex,
    get_document,
    get_index,
    load_documents,
    tokenize,
)

# Source names a document may cite; each document must cite at least one.
CITED_SOURCES = ("McPherson", "Hartman", "煤矿安全规程", "CFR", "NFPA", "PIARC", "JTG", "GBZ", "Atkinson")


@pytest.fixture(scope="module")
def docs() -> list[KnowledgeDoc]:
    return load_documents()


# --- the documents --------------------------------------------------------------------------------


def test_there_are_8_to_12_documents_with_unique_ids_and_titles(docs: list[KnowledgeDoc]) -> None:
    assert 8 <= len(docs) <= 12
    assert len({d.doc_id for d in docs}) == len(docs)
    assert len({d.title for d in docs}) == len(docs)
    assert [d.doc_id for d in docs] == sorted(d.doc_id for d in docs)


@pytest.mark.parametrize("path", sorted(DEFAULT_KB_DIR.glob("*.md")), ids=lambda p: p.stem)
def test_each_document_is_well_formed_and_cites_sources(path: Path) -> None:
    doc = get_document(path.stem)
    assert doc is not None
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", doc.doc_id)
    assert doc.url == f"/kb/{doc.doc_id}"
    assert path.read_text(encoding="utf-8").startswith(f"# {doc.title}\n")
    assert not doc.text.startswith("# ")  # the body; pages render the title separately
    words = len(doc.text.split())
    assert 300 <= words <= 900, f"{doc.doc_id} has {words} words"
    assert any(name in doc.text for name in CITED_SOURCES), f"{doc.doc_id} cites no source"


def test_get_document_only_returns_known_ids() -> None:
    assert get_document("fan-laws").title.startswith("Fan Laws")
    for bad in ("nope", "../kb/fan-laws", "fan-laws.md", "", "FAN-LAWS"):
        assert get_document(bad) is None


def test_the_default_index_is_built_once() -> None:
    assert get_index() is get_index()


# --- tokeniser -----------------------------------------------------------------------------------


def test_tokenize_lowercases_splits_and_drops_stop_words() -> None:
    assert tokenize("The Fan-Laws of CH4, per m³/s!") == ["fan", "law", "ch4", "m3", "s"]
    assert tokenize("ＣＨ４ m3/s") == ["ch4", "m3", "s"]  # full-width IME input and superscripts fold


def test_tokenize_emits_cjk_characters_and_bigrams() -> None:
    assert tokenize("瓦斯浓度") == ["瓦", "斯", "浓", "度", "瓦斯", "斯浓", "浓度"]
    assert tokenize("methane [瓦斯] limit") == ["methane", "瓦", "斯", "瓦斯", "limit"]


def test_plural_folding_matches_singular_and_plural() -> None:
    assert tokenize("fans laws gases") == tokenize("fan law gase")
    assert tokenize("gas pass") == ["gas", "pass"]


# --- search --------------------------------------------------------------------------------------


def test_fan_laws_query_returns_the_fan_laws_document_first() -> None:
    hits = get_index().search("fan laws", 5)
    assert hits[0].doc.doc_id == "fan-laws"


@pytest.mark.parametrize("query", ["methane", "methane limit in return air", "CH4 concentration"])
def test_methane_queries_hit_the_gas_limits_document(query: str) -> None:
    assert get_index().search(query, 3)[0].doc.doc_id == "gas-limits"


@pytest.mark.parametrize(
    ("query", "doc_id"),
    [
        ("瓦斯", "gas-limits"),
        ("风速", "air-velocity-limits"),
        ("自然风压", "natural-ventilation"),
        ("局部通风机 循环风", "auxiliary-ventilation"),
        ("射流风机", "tunnel-ventilation"),
        ("粉尘", "dust-control"),
        ("需风量", "air-requirements"),
        ("等积孔", "atkinson-resistance"),
        ("Atkinson square law resistance", "atkinson-resistance"),
        ("air quantity per person diesel kW", "air-requirements"),
        ("natural ventilation pressure winter", "natural-ventilation"),
        ("fans in series and parallel operating point", "fan-operating-point"),
        ("forcing exhaust duct heading", "auxiliary-ventilation"),
        ("jet fan critical velocity backlayering", "tunnel-ventilation"),
        ("respirable dust silica limit", "dust-control"),
        ("maximum air velocity coal face", "air-velocity-limits"),
    ],
)
def test_topic_queries_find_their_document_first(query: str, doc_id: str) -> None:
    assert get_index().search(query, 3)[0].doc.doc_id == doc_id


def test_results_are_ranked_by_score_descending_and_positive() -> None:
    hits = get_index().search("fan pressure airflow methane velocity", 10)
    assert len(hits) > 3
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_limit_is_respected(limit: int) -> None:
    assert len(get_index().search("ventilation air", limit)) == limit


def test_limit_below_one_is_rejected() -> None:
    with pytest.raises(ValueError):
        get_index().search("fan", 0)


@pytest.mark.parametrize("query", ["", "   ", "!!!", "the and of", "xyzzy"])
def test_queries_without_matches_return_nothing(query: str) -> None:
    assert get_index().search(query, 5) == []


def test_excerpt_is_a_short_passage_containing_the_query_terms() -> None:
    hit = get_index().search("critical velocity backlayering", 1)[0]
    assert len(hit.excerpt) <= knowledge.EXCERPT_CHARS + 2  # plus ellipses
    assert "critical velocity" in hit.excerpt.lower()
    assert not hit.excerpt.startswith("#")


def test_chinese_excerpt_contains_the_term() -> None:
    hit = get_index().search("自然风压", 1)[0]
    assert "自然风压" in hit.excerpt


# --- loading rules (on a temporary folder) ---------------------------------------------------------


def _write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text, encoding="utf-8")


def test_load_documents_skips_front_matter_and_sorts(tmp_path: Path) -> None:
    _write(tmp_path, "b-doc.md", "# Bee\n\nAbout bees.\n")
    _write(tmp_path, "a-doc.md", "---\nauthor: x\n---\n# Ant\n\nAbout ants.\n")
    _write(tmp_path, "notes.txt", "ignored")
    loaded = load_documents(tmp_path)
    assert [(d.doc_id, d.title, d.url) for d in loaded] == [
        ("a-doc", "Ant", "/kb/a-doc"),
        ("b-doc", "Bee", "/kb/b-doc"),
    ]
    assert loaded[0].text == "About ants."


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("Bad Name.md", "# T\n\nx", "slug"),
        ("no-title.md", "Just text\n", "# Title"),
        ("empty-title.md", "#  \n\nx", "# Title"),
    ],
)
def test_load_documents_rejects_malformed_files(tmp_path: Path, name: str, text: str, message: str) -> None:
    _write(tmp_path, name, text)
    with pytest.raises(ValueError, match=re.escape(message)):
        load_documents(tmp_path)


def test_load_documents_requires_an_existing_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_documents(tmp_path / "missing")


def test_a_term_in_half_of_the_documents_still_scores(tmp_path: Path) -> None:
    # Stock BM25Okapi gives such a term an IDF of exactly 0, so it would find nothing.
    for i, body in enumerate(["methane here", "methane there", "nothing", "other"]):
        _write(tmp_path, f"d{i}.md", f"# D{i}\n\n{body}\n")
    hits = KnowledgeIndex.from_folder(tmp_path).search("methane", 5)
    assert {h.doc.doc_id for h in hits} == {"d0", "d1"}


def test_duplicate_doc_ids_are_rejected() -> None:
    doc = KnowledgeDoc("x", "X", "# X\n\ntext", "/kb/x")
    with pytest.raises(ValueError, match="unique"):
        KnowledgeIndex([doc, doc])


def test_a_table_excerpt_reads_as_text_not_markdown() -> None:
    """A citation's snippet is shown as plain text: no raw pipes, rule or bold markers (try9)."""
    hits = get_index().search("maximum air velocity main intake return airways", limit=3)
    table = next(hit for hit in hits if hit.doc.doc_id == "air-velocity-limits")
    assert "|" not in table.excerpt and "---" not in table.excerpt
    assert "Minimum (m/s) · Maximum (m/s); Ventilation shafts" in table.excerpt
    assert "Air crossings [风桥] · — · 10;" in table.excerpt
    bold = get_index().search("each person receives 4 m³/min air", limit=3)
    assert any("each person receives not less than 4 m³/min" in hit.excerpt for hit in bold)
    assert all("**" not in hit.excerpt for hit in bold)


def test_a_chinese_methane_limit_question_gets_the_methane_limits_excerpt() -> None:
    """Tester (try10): "什么是回风巷的瓦斯浓度限值？" was answered from the CO2 paragraph."""
    top = get_index().search("什么是回风巷的瓦斯浓度限值？", limit=1)[0]
    assert top.doc.doc_id == "gas-limits"
    assert "CH4 ≤ 0.5%" in top.excerpt and "Carbon dioxide" not in top.excerpt
    # A list's items as text: a leading "- " made the UI draw the snippet as a bullet list (try11).
    assert not top.excerpt.startswith("-") and " - " not in top.excerpt
    assert top.excerpt.startswith("Intake air of a coal or development face")
