"""The calculation tools' citations in the run's language: snippets, friction-table rows, regulation rows.

A citation (title, snippet, URL) is shown to the person, so its snippet is worded from the catalogue
(``tool.cite.*``, ``tool.friction.*``, ``tool.rule.*`` in :mod:`ventapp.i18n.zh_cn_tools` /
:mod:`ventapp.i18n.en_tools`) in the language of the run (:func:`~ventapp.tools.run_language.run_language`),
as a knowledge-base citation's title is. Formulas stay formulas and book titles stay English; the
English wording is the domain's own. The domain layer (:mod:`ventapp.domain.regulations`,
:mod:`ventapp.domain.airways`) stays pure: its rows are worded here by their ids and status.
"""

from __future__ import annotations

from ventapp.domain.airways import FrictionFactor
from ventapp.domain.regulations import CN_COAL_EDITION, RegulationRow
from ventapp.i18n import has_message, t
from ventapp.tools.run_language import run_language

_SOURCE_IDS = {
    "Table 4-2": "tool.cite.tien_42",
    "Table 4-3": "tool.cite.tien_43",
    "Table 2.4": "tool.cite.thakur_24",
}
"""The friction-factor table's sources, by the table they name (a source not listed is cited as is)."""


def cite(key: str, lang: str | None = None, **fields: object) -> str:
    """The snippet ``tool.cite.<key>`` in ``lang`` (default: the run's language), e.g. ``cite("nvp")``."""
    return t(f"tool.cite.{key}", lang or run_language(), **fields)


def friction_source(factor: FrictionFactor | None, lang: str | None = None) -> str:
    """Where a friction factor comes from: its table row and book, or "given by the user" (``None``).

    Args:
        factor: A row of :data:`ventapp.domain.airways.FRICTION_FACTORS`, or None for the user's own k.
        lang: ``"zh-CN"`` or ``"en"``; default the run's language.

    Returns:
        E.g. ``"井筒，砖砌，无障碍物——Tien, Practical Mine Ventilation Engineering，第 4 章，表 4-3（NCB 1979）"``.
    """
    lang = lang or run_language()
    if factor is None:
        return t("tool.cite.friction_user", lang)
    key = f"tool.friction.{factor.key}"
    description = t(key, lang) if has_message(key) else factor.description
    source_id = next((sid for table, sid in _SOURCE_IDS.items() if table in factor.source), None)
    source = t(source_id, lang) if source_id else factor.source
    return t("tool.cite.friction_table", lang, description=description, source=source)


def _edition(row: RegulationRow, lang: str) -> str:
    if row.edition == CN_COAL_EDITION:
        return t("tool.rule.edition_cn_coal", lang)
    if row.edition.isdigit():
        return t("tool.rule.edition_year", lang, year=row.edition)
    return row.edition


def rule_citation(row: RegulationRow, lang: str | None = None) -> str:
    """A regulation row's citation in ``lang``: the English is :attr:`RegulationRow.citation`.

    E.g. ``"《煤矿安全规程》2016 年版（2022 年修订），条款号未核实"``.
    """
    lang = lang or run_language()
    article = (
        t("tool.rule.article", lang, article=row.article)
        if row.article
        else t("tool.rule.article_unconfirmed", lang)
    )
    return t("tool.rule.citation", lang, standard=row.standard, edition=_edition(row, lang), article=article)


def rule_status(row: RegulationRow, lang: str | None = None) -> str:
    """The verification sentence a tool passes on with a row's value, in ``lang`` (:attr:`RegulationRow.status`)."""
    lang = lang or run_language()
    if row.verified and row.article:
        return t("tool.rule.status_checked", lang, citation=rule_citation(row, lang))
    return t("tool.rule.status_unchecked", lang, standard=row.standard)
