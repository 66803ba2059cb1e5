"""Message catalogues for every user-facing string of the UI, keyed by stable ids.

One catalogue per language (:mod:`ventapp.i18n.zh_cn` first, :mod:`ventapp.i18n.en`), split into
module pairs by area (``_chat``, ``_pages``, ``_schedules``, ``_refusals``, ``_tools``; see :data:`MESSAGES`);
components and states ask for a message by id and never hold the sentence. Simplified
Chinese is the default; English is the second language. Every id exists in both
catalogues with the same ``str.format`` placeholders (a test checks it), and the
formats of numbers, dates and units come from :mod:`ventapp.i18n.formats` (Babel).

The browser UI reads the language a person chose (or their browser's) from
``LangState`` (``ventapp.state.lang_state``); server code that shows text takes the
language as an argument. Code below the UI (agent, tools) never calls :func:`t`:
it reports codes and data, and the UI words them; the one exception is text a tool draws
into a file (the network solver's figures), worded in the run's language
(:mod:`ventapp.tools.run_language`), and the API words its frames per request (``Accept-Language``).
A refusal (:mod:`ventapp.agent.refusals`) names its catalogue id and takes its English sentence
(the API's ``detail``) from the English catalogue; the API words its ``message``.
"""

from __future__ import annotations

from ventapp.i18n.en import MESSAGES as _EN
from ventapp.i18n.en_chat import MESSAGES as _EN_CHAT
from ventapp.i18n.en_pages import MESSAGES as _EN_PAGES
from ventapp.i18n.en_refusals import MESSAGES as _EN_REFUSALS
from ventapp.i18n.en_schedules import MESSAGES as _EN_SCHEDULES
from ventapp.i18n.en_tools import MESSAGES as _EN_TOOLS
from ventapp.i18n.zh_cn import MESSAGES as _ZH
from ventapp.i18n.zh_cn_chat import MESSAGES as _ZH_CHAT
from ventapp.i18n.zh_cn_pages import MESSAGES as _ZH_PAGES
from ventapp.i18n.zh_cn_refusals import MESSAGES as _ZH_REFUSALS
from ventapp.i18n.zh_cn_schedules import MESSAGES as _ZH_SCHEDULES
from ventapp.i18n.zh_cn_tools import MESSAGES as _ZH_TOOLS

DEFAULT_LANG = "zh-CN"
"""The language of a browser that prefers neither Chinese nor English, and of the server's texts."""
LANGS = ("zh-CN", "en")
"""Supported languages, the default first."""
LANG_NAMES = {"zh-CN": "中文", "en": "English"}
"""Each language named in itself (the header's switch)."""

MESSAGES: dict[str, dict[str, str]] = {
    "zh-CN": {**_ZH, **_ZH_CHAT, **_ZH_PAGES, **_ZH_SCHEDULES, **_ZH_REFUSALS, **_ZH_TOOLS},
    "en": {**_EN, **_EN_CHAT, **_EN_PAGES, **_EN_SCHEDULES, **_EN_REFUSALS, **_EN_TOOLS},
}
"""Language -> id -> message, one lookup over module pairs by area: the shell and the network solver
(``<lang>``: header, sidebar, composer; the solver's refusals and figures), a chat's answer
(``<lang>_chat``: tool cards, approvals, errors by code), the other pages and the run
(``<lang>_pages``), the schedules page (``<lang>_schedules``) and the API's refusals (``<lang>_refusals``)."""


def resolve_lang(value: str | None) -> str:
    """A supported language for a stored choice or a browser tag.

    Args:
        value: ``"zh-CN"``, ``"en"``, a BCP 47 tag such as ``"en-GB"`` or ``"zh-Hans-CN"``,
            or ``""``/None (not chosen yet).

    Returns:
        ``"en"`` for English tags, ``"zh-CN"`` for Chinese ones and for anything else.
    """
    tag = (value or "").strip().lower().replace("_", "-")
    if tag == "en" or tag.startswith("en-"):
        return "en"
    return DEFAULT_LANG


def accept_language(header: str | None) -> str:
    """The language an API request's ``Accept-Language`` header asks for, as the UI picks one.

    The first of its languages (by ``q``, then by order) that is English or Chinese; ``zh-CN``
    when none is, or with no header (spec: Chinese is the default).

    Args:
        header: E.g. ``"en-US,en;q=0.9,zh-CN;q=0.8"``, ``"de, zh;q=0.5"``, or None.

    Returns:
        ``"zh-CN"`` or ``"en"``.
    """
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate((header or "").split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if tag.strip() and quality > 0:
            ranked.append((-quality, index, tag.strip().lower()))
    for _, _, tag in sorted(ranked):
        if tag == "en" or tag.startswith("en-"):
            return "en"
        if tag == "zh" or tag.startswith("zh-"):
            return DEFAULT_LANG
    return DEFAULT_LANG


def t(key: str, lang: str = DEFAULT_LANG, **fields: object) -> str:
    """The message ``key`` in ``lang`` (other catalogues and finally the key itself as fallbacks).

    Args:
        key: A stable message id, e.g. ``"schedules.run_now"``.
        lang: ``"zh-CN"`` or ``"en"``; anything else reads as the default (``zh-CN``).
        **fields: Values for the message's ``{placeholders}``.

    Returns:
        The formatted sentence.
    """
    catalogue = MESSAGES.get(lang) or MESSAGES[resolve_lang(lang)]
    text = catalogue.get(key) or MESSAGES["en"].get(key) or key
    # Only messages with placeholders or literal braces ("{{") go through str.format.
    return text.format(**fields) if fields or "{{" in text else text


def has_message(key: str) -> bool:
    """Whether ``key`` is a message id (e.g. before wording an error code that may be unknown)."""
    return key in MESSAGES[DEFAULT_LANG]


def tn(key: str, count: int, lang: str = DEFAULT_LANG, **fields: object) -> str:
    """A message that depends on a count: ``key_one`` or ``key_other`` by ``lang``'s plural rule.

    Args:
        key: The id without its plural suffix, e.g. ``"tool.summary_sources"``; the catalogues hold
            ``<key>_one`` and ``<key>_other`` (Chinese has one form: both read the same).
        count: The number that picks the form; given to the message as ``{count}``, grouped per language.
        lang: ``"zh-CN"`` or ``"en"``.
        **fields: Values for the message's other placeholders.

    Returns:
        The formatted sentence, e.g. ``"1 airway"`` / ``"25 airways"``.
    """
    from ventapp.i18n.formats import number, plural_form  # formats imports this module

    form = plural_form(count, lang)
    name = f"{key}_{form}" if has_message(f"{key}_{form}") else f"{key}_other"
    return t(name, lang, count=number(count, lang), **fields)
