"""Text handling of the knowledge base (:mod:`ventapp.tools.knowledge`): tokens and excerpts.

The tokeniser serves the BM25 index and the excerpt picker alike; the excerpt helpers turn a
Markdown block into the one line of plain text a citation's snippet shows.
"""

from __future__ import annotations

import re
import unicodedata

EXCERPT_CHARS = 300
"""Longest excerpt, in characters (plus the ellipses)."""

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RUN_RE = re.compile(rf"^[{_CJK}]+$")
_STOP_WORDS = frozenset(
    "a an and are as at be by for from how in into is it its of on or that the this to was "
    "what when where which with per than then there these those can should must may".split()
)


def _stem(token: str) -> str:
    # Crude plural folding so "fan laws" matches "fan law"; applied to queries and documents alike.
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss") and token.isalpha():
        return token[:-1]
    return token


def is_cjk(token: str) -> bool:
    """True for a token of Chinese characters (a unigram or bigram of :func:`tokenize`)."""
    return bool(_CJK_RUN_RE.match(token))


def tokenize(text: str) -> list[str]:
    """Split text into search tokens.

    Args:
        text: Any English/Chinese text.

    Returns:
        Lower-cased, NFKC-normalised word tokens without stop words; each CJK run contributes its
        single characters and its character bigrams.
    """
    tokens: list[str] = []
    # NFKC folds full-width IME input (ＣＨ４) and superscripts (m³ -> m3) to plain characters.
    for match in _TOKEN_RE.finditer(unicodedata.normalize("NFKC", text).lower()):
        word = match.group(0)
        if _CJK_RUN_RE.match(word):
            tokens.extend(word)
            tokens.extend(word[i : i + 2] for i in range(len(word) - 1))
        elif word not in _STOP_WORDS:
            tokens.append(_stem(word))
    return tokens


_TABLE_RULE = re.compile(r":?-{3,}:?")
_EMPHASIS = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


def _plain(block: str) -> str:
    """A Markdown block as the one line of text an excerpt shows (a citation's snippet).

    A table's rows read ``cell · cell``, one row after another with ``; `` (its ``|---|`` rule
    dropped), a list's items follow each other without their ``-`` or ``1.`` markers, and bold
    markers go. The UI renders a snippet as Markdown: raw pipes and asterisks were noise there,
    and a leading ``-`` drew a bullet list (testers' findings).
    """
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    if lines and all(line.startswith("|") for line in lines):
        rows = []
        for line in lines:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if all(_TABLE_RULE.fullmatch(cell) for cell in cells if cell):
                continue
            rows.append(" · ".join(cell for cell in cells if cell))
        text = "; ".join(row for row in rows if row)
    elif lines and _LIST_ITEM.match(lines[0]):
        text = " ".join(_LIST_ITEM.sub("", line) for line in lines)
    else:
        text = " ".join(block.split())
    return _EMPHASIS.sub(lambda match: match.group(1) or match.group(2), text)


def paragraphs(text: str) -> list[str]:
    """The blocks of a document body an excerpt can show, in order, as plain text.

    Args:
        text: A Markdown body (:attr:`KnowledgeDoc.text`).

    Returns:
        One string per blank-line-separated block (see :func:`_plain`), bare headings left out.
        A Chinese document and its English twin have the same number, block for block.
    """
    out = []
    for block in re.split(r"\n\s*\n", text):
        block = _plain(block)
        # A bare heading says little on its own; the paragraph under it is the better excerpt.
        if block and not re.fullmatch(r"#+ .*", block):
            out.append(block)
    return out


_BREAKS = " 。；，、：）"
_BREAK_REACH = 40


def _break_before(text: str, pos: int, floor: int) -> int:
    """The position just after the last space or Chinese punctuation mark before ``pos``.

    Looks back at most ``_BREAK_REACH`` characters (never before ``floor``) and returns ``pos``
    when there is none: Chinese has no spaces, and snapping to a space far away (one inside
    "CH4 ≤ 0.5%") cut a 300-character Chinese excerpt down to a few characters.
    """
    for i in range(pos - 1, max(floor, pos - _BREAK_REACH) - 1, -1):
        if text[i] in _BREAKS:
            return i + 1
    return pos


def window(paragraph: str, terms: set[str]) -> str:
    if len(paragraph) <= EXCERPT_CHARS:
        return paragraph
    lowered = paragraph.lower()
    positions = [lowered.find(t) for t in terms if t and lowered.find(t) >= 0]
    first = min(positions) if positions else 0
    start = max(0, first - EXCERPT_CHARS // 4)
    if start > 0:
        # Start on a word (or Chinese clause) boundary so the excerpt does not begin mid-word.
        start = _break_before(paragraph, start, 0)
    end = min(len(paragraph), start + EXCERPT_CHARS)
    if end < len(paragraph):
        end = _break_before(paragraph, end, start + 1)
    body = paragraph[start:end].strip()
    return ("…" if start > 0 else "") + body + ("…" if end < len(paragraph) else "")


def term_weight(paragraph: str, weights: dict[str, float]) -> float:
    """The summed weight of the distinct query terms ``paragraph`` contains.

    Distinct, and weighted (by IDF, see ``make_excerpt``), because a common character such as 风
    occurs dozens of times in a long Chinese paragraph: counting occurrences picked a paragraph
    about fans in series for "反风要求" over the one on airflow reversal.
    """
    present = set(tokenize(paragraph))
    return sum(weight for term, weight in weights.items() if term in present)
