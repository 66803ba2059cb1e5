"""The one rule for ``user_name`` (issue 17 item 9)."""

from __future__ import annotations

import pytest

from ventapp.identity import DEFAULT_USER, InvalidUserName, normalize_user_name


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        (None, DEFAULT_USER),
        ("alice", "alice"),
        ("alice\u00a0", "alice"),
        ("\talice\n", "alice"),
        ("  Li \t Wei ", "Li Wei"),
        ("Li\u3000\u00a0Wei", "Li Wei"),
        ("Jose\u0301", "Jos\u00e9"),  # decomposed é: NFC makes it the composed one
        ("王小明", "王小明"),
        ("li.wei_2-x+y@example.com", "li.wei_2-x+y@example.com"),
        ("O'Brien", "O'Brien"),
        ("x" * 128, "x" * 128),
    ],
)
def test_names_are_normalised_to_one_identity(raw: str | None, name: str) -> None:
    assert normalize_user_name(raw) == name


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "\u00a0\t\n",
        "al\x00ice",
        "alice\x1b[31m",
        "ali\u200bce",  # zero-width space
        "\u200d",
        "\ufeffalice",  # byte-order mark
        "alice\u202e",  # right-to-left override
        "al\ud800ice",  # lone surrogate (possible through JSON escapes)
        "x" * 129,
    ],
)
def test_blank_invisible_and_control_characters_are_refused(raw: str) -> None:
    with pytest.raises(InvalidUserName) as refused:
        normalize_user_name(raw)
    assert refused.value.message.startswith("user_name")


@pytest.mark.parametrize(
    ("raw", "character"),
    [("ops/admin", "/"), ("../etc", "/"), ("a\\b", "\\"), ("c:x", ":"), ("<b>", "<"), ("a|b", "|"),
     ("a*", "*"), ('say"hi"', '"'), ("100%", "%"), ("a;b", ";"), ("$HOME", "$"), ("a`b", "`"), ("a,b", ",")],
)  # fmt: skip
def test_path_shell_and_markup_characters_are_refused_naming_the_character(raw: str, character: str) -> None:
    with pytest.raises(InvalidUserName) as refused:
        normalize_user_name(raw)
    assert refused.value.cause == "unsafe" and refused.value.character == character
    assert refused.value.message.startswith("user_name") and repr(character) in refused.value.message


@pytest.mark.parametrize("raw", ["..", ".", "-", "@", "'"])
def test_a_name_of_punctuation_only_is_refused(raw: str) -> None:
    with pytest.raises(InvalidUserName) as refused:
        normalize_user_name(raw)
    assert refused.value.cause == "no_letter"
