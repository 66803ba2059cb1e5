"""The message catalogues: the same ids and placeholders in every language; lookups and fallbacks."""

from __future__ import annotations

import string

from ventapp.i18n import LANGS, MESSAGES, t


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


def test_lookup_formats_and_falls_back() -> None:
    assert t("schedules.run_now") == "Run now"
    assert t("schedules.run_now", "zh-CN") == "立即执行"
    assert t("nav.waiting", "zh-CN", count=2) == "有 2 个定时运行在等你处理"
    assert t("schedules.run_now", "fr") == "Run now", "unknown languages read English"
    assert t("no.such.id") == "no.such.id"
