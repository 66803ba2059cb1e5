"""Words of the UI in the active language, and the header's language switch.

:func:`t` is the components' only source of text: it compiles each message of both
catalogues into the page and picks one by :attr:`LangState.lang` in the browser, so a
switch relabels the page at once without a round trip. An id missing from the
catalogues fails the build (``KeyError``), never a blank label at run time.

DOM hooks: ``#lang-switch`` (the trigger; items ``zh-CN`` and ``en``).
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from ventapp.i18n import LANG_NAMES, LANGS, MESSAGES
from ventapp.state.lang_state import LangState

IS_EN = LangState.lang == "en"
"""True in the browser while the page is in English (``""``, not chosen yet, reads as Chinese)."""


def t(key: str, **fields: Any) -> rx.Var[str]:
    """The message ``key`` in the browser's language; ``fields`` may be state vars.

    Args:
        key: A message id of :mod:`ventapp.i18n`, e.g. ``"header.new_chat"``.
        **fields: Values for the message's placeholders (plain values or ``rx.Var``).

    Raises:
        KeyError: At build time, when ``key`` is not in the catalogues.
    """
    english, chinese = MESSAGES["en"][key], MESSAGES["zh-CN"][key]
    if fields or "{{" in english + chinese:  # the same rule as ventapp.i18n.t
        english, chinese = english.format(**fields), chinese.format(**fields)
    return rx.cond(IS_EN, english, chinese).to(str)


def active_lang() -> rx.Var[str]:
    """``"en"`` or ``"zh-CN"`` as a var (``""`` before hydration reads as ``"zh-CN"``)."""
    return rx.cond(IS_EN, "en", "zh-CN").to(str)


def lang_switch(*after: Any) -> rx.Component:
    """中文 / English, remembered in this browser.

    Args:
        *after: Event handlers taking the new language (e.g. ``ChatState.relocalise``), run
            after the switch so server-worded text (footers, dates, errors) follows it.
    """
    return rx.select.root(
        rx.select.trigger(
            id="lang-switch",
            variant="ghost",
            color_scheme="gray",
            aria_label=t("header.language"),
            title=t("header.language"),
        ),
        rx.select.content(
            *[rx.select.item(LANG_NAMES[lang], value=lang, custom_attrs={"lang": lang}) for lang in LANGS]
        ),
        value=active_lang(),
        on_change=lambda value: [LangState.set_lang(value), *[handler(value) for handler in after]],
        size="1",
    )
