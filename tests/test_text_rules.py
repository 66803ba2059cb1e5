"""The text rules: one-line names refuse invisible characters, long text refuses NUL, machine text is made storable."""

from __future__ import annotations

import pytest

from ventapp.identity import InvalidUserName, normalize_user_name
from ventapp.text_rules import holds_nul, invisible_character, storable


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("红砂岗风量报告 v2", None),
        ("Fan room #3 (east)", None),
        ("报告\u202egpj.exe", "\u202e"),  # right-to-left override
        ("a\u202ab", "\u202a"),
        ("a\u2066b\u2069", "\u2066"),  # isolates
        ("a\u200eb", "\u200e"),
        ("a\u200fb", "\u200f"),
        ("a\x00b", "\x00"),
        ("a\x1bb", "\x1b"),
        ("a\tb", "\t"),  # a one-line name holds no tab (callers fold blanks first)
        ("a\u200bb", "\u200b"),  # zero-width space
    ],
)
def test_invisible_character(text: str, found: str | None) -> None:
    assert invisible_character(text) == found


def test_user_names_keep_using_the_same_rule() -> None:
    with pytest.raises(InvalidUserName) as refused:
        normalize_user_name("Li\u202eWei")
    assert refused.value.cause == "invisible"
    assert normalize_user_name("Li Wei") == "Li Wei"


def test_holds_nul_walks_strings_lists_and_dicts() -> None:
    assert holds_nul("a\x00") and not holds_nul("a\tb\nc\r")
    assert holds_nul(["ok", {"k": ["x\x00"]}]) and holds_nul({"\x00": 1})
    assert not holds_nul([1, None, True, {"a": "b"}])


def test_storable_replaces_nul_everywhere_and_keeps_the_rest() -> None:
    value = {"content": "an\x00swer", "cards": [{"args": {"p\x00": "v\x00"}, "n": 3}], "none": None}
    assert storable(value) == {
        "content": "an\ufffdswer",
        "cards": [{"args": {"p\ufffd": "v\ufffd"}, "n": 3}],
        "none": None,
    }
    clean = "no nul here"
    assert storable(clean) is clean and storable(None) is None and storable(("a\x00",)) == ["a\ufffd"]
