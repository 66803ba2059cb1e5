"""The knowledge-document page's state: both versions of a document, and which one ``?lang=`` chose."""

from __future__ import annotations

import pytest

from ventapp.state.knowledge_state import chosen_lang, load_versions


def test_a_document_loads_in_both_languages_under_one_id() -> None:
    versions = load_versions("natural-ventilation")
    assert versions is not None
    assert versions["zh-CN"].title == "自然风压" and versions["zh-CN"].lang == "zh-CN"
    assert versions["en"].title.startswith("Natural Ventilation Pressure") and versions["en"].lang == "en"
    assert versions["zh-CN"].url == versions["en"].url == "/kb/natural-ventilation"


@pytest.mark.parametrize("doc_id", ["no-such-doc", "../kb/fan-laws", ""])
def test_an_unknown_document_is_not_found(doc_id: str) -> None:
    assert load_versions(doc_id) is None


@pytest.mark.parametrize(
    ("value", "expected"), [("en", "en"), ("zh-CN", "zh-CN"), (None, ""), ("", ""), ("fr", ""), ("EN", "")]
)
def test_only_an_exact_lang_parameter_chooses_a_version(value: str | None, expected: str) -> None:
    assert chosen_lang(value) == expected
