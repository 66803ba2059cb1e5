"""The message catalogues: the same ids and placeholders in every language; lookups and fallbacks."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from ventapp.i18n import DEFAULT_LANG, LANGS, MESSAGES, accept_language, resolve_lang, t

PROJECT = Path(__file__).resolve().parents[2]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_language_has_every_id_with_the_same_placeholders() -> None:
    english = MESSAGES["en"]
    for lang in LANGS:
        catalogue = MESSAGES[lang]
        assert set(catalogue) == set(english), f"{lang} differs from en"
        for key, text in catalogue.items():
            assert text.strip(), f"{lang}:{key} is empty"
            assert _fields(text) == _fields(english[key]), f"{lang}:{key} placeholders differ"


def test_chinese_is_the_default_and_english_the_second_language() -> None:
    assert DEFAULT_LANG == "zh-CN" and LANGS[0] == "zh-CN"
    assert t("schedules.run_now") == "立即执行"
    assert t("schedules.run_now", "en") == "Run now"
    assert t("nav.waiting", "zh-CN", count=2) == "定时任务：有 2 个定时运行在等你处理"
    assert t("schedules.run_now", "fr") == "立即执行", "unknown languages read as the default"
    assert t("no.such.id") == "no.such.id"


def test_browser_tags_resolve_to_a_supported_language() -> None:
    assert resolve_lang("en-GB") == resolve_lang("EN") == resolve_lang("en_US") == "en"
    assert resolve_lang("zh-Hans-CN") == resolve_lang("zh-TW") == resolve_lang("zh") == "zh-CN"
    assert resolve_lang("") == resolve_lang(None) == resolve_lang("de-DE") == "zh-CN"


def test_chinese_messages_are_chinese() -> None:
    """A catalogue entry copied across untranslated is caught (ids with no words to translate excepted)."""
    untranslated = {
        key
        for key, text in MESSAGES["zh-CN"].items()
        if text == MESSAGES["en"][key] and re.search(r"[A-Za-z]{4,}", text)
    }
    assert untranslated <= {"form.cron_placeholder"}, sorted(untranslated)


def test_every_id_the_ui_asks_for_exists() -> None:
    """Literal ids in ``t("…")`` calls of the UI and state code are in the catalogues."""
    asked: set[str] = set()
    for folder in ("ventapp/pages", "ventapp/state"):
        for path in (PROJECT / folder).rglob("*.py"):
            asked |= set(re.findall(r"""\bt\(\s*"([a-z_][a-z0-9_.-]*)\"""", path.read_text(encoding="utf-8")))
    assert len(asked) > 150
    missing = sorted(key for key in asked if key not in MESSAGES["en"])
    assert missing == []


def test_pages_word_text_in_the_browsers_language() -> None:
    """Tester's item 5: the chat page's "answering elsewhere" notice was compiled with the server's
    :func:`ventapp.i18n.t` (Chinese, fixed at build time) and showed Chinese in the English UI.
    Components take their words from ``ventapp.pages.components.lang.t`` (both languages)."""
    from ventapp.pages.chat import live_elsewhere_notice

    compiled = str(live_elsewhere_notice())
    assert MESSAGES["en"]["chat.live_elsewhere"][:40] in compiled
    assert MESSAGES["en"]["chat.follow_live"] in compiled
    server_side = [
        str(path.relative_to(PROJECT))
        for path in (PROJECT / "ventapp/pages").rglob("*.py")
        if re.search(r"^from ventapp\.i18n import .*\bt\b", path.read_text(encoding="utf-8"), re.M)
    ]
    assert server_side == [], "pages use ventapp.pages.components.lang.t"


def test_no_english_message_hedges_its_plural_with_parentheses() -> None:
    """ "1 scheduled run(s) are waiting" (a tester): counts take ``tn`` with ``_one``/``_other`` forms."""
    hedged = sorted(key for key, text in MESSAGES["en"].items() if re.search(r"\w\(s\)", text))
    assert hedged == []


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        (None, "zh-CN"),
        ("", "zh-CN"),
        ("en-US,en;q=0.9", "en"),
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"),
        ("de-DE, en;q=0.8, zh;q=0.5", "en"),
        ("fr, de", "zh-CN"),
        ("zh;q=0.4, en;q=0.6", "en"),
        ("en;q=0, zh-TW", "zh-CN"),
        ("*", "zh-CN"),
        ("en;q=abc, zh", "zh-CN"),
    ],
)
def test_an_api_requests_accept_language_picks_chinese_or_english(header: str | None, lang: str) -> None:
    assert accept_language(header) == lang


LABEL_FIELDS = ("tools", "agent", "level", "user")
"""Placeholders that hold a name or label, which in Chinese is often Chinese words itself."""
CJK = "\u4e00-\u9fff"
SPACED_ON_PURPOSE = {"form.cron", "cron.field_count"}
"""They show the five fields of a cron expression as it is typed, separated by spaces."""


def test_chinese_joins_words_and_labels_without_a_space() -> None:
    """Tester: "正在调用 计算器" — Chinese puts no space between words (a space before a number or a
    Latin word is fine), so a label is joined to its verb directly, or set in quotes."""
    spaced = re.compile(
        rf"[{CJK}] [{CJK}]|[{CJK}] \{{({'|'.join(LABEL_FIELDS)})\}}|\{{({'|'.join(LABEL_FIELDS)})\}} [{CJK}]"
    )
    offending = {
        key: text
        for key, text in MESSAGES["zh-CN"].items()
        if spaced.search(text) and key not in SPACED_ON_PURPOSE
    }
    assert offending == {}
    assert t("live.calling", "zh-CN", tools="计算器") == "正在调用计算器…"
    assert t("live.calling", "en", tools="Calculator") == "Calling Calculator…"
