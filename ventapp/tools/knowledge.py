"""A small, local ventilation-engineering knowledge base with BM25 search.

Documents are the Markdown files in :data:`DEFAULT_KB_DIR` (``ventapp/tools/kb``).

Document format (no front matter is used):

* The file stem is the document id and must be a slug (``[a-z0-9-]+``), e.g.
  ``fan-laws.md`` -> ``fan-laws``. The app serves the document at
  ``/kb/<doc_id>``, which is the document's stable citation URL.
* The first non-empty line is ``# Title``. A leading ``---`` front-matter block is
  tolerated and skipped, but nothing in it is used.
* The body is English Markdown; Chinese terms go in brackets, e.g.
  "methane [瓦斯]", so Chinese queries find the document too.
* Each fact or formula names its source in the text (book, standard, regulation).

Search: BM25 (``rank_bm25.BM25Okapi``) over title + body, plus a bonus of
``TITLE_BOOST`` × IDF for each query term found in the title. The tokeniser lower-cases,
NFKC-normalises, splits on non-alphanumerics, strips a plural "s", drops a few stop words, and turns
each run of CJK characters into single characters plus bigrams, because Chinese is
written without spaces.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from rank_bm25 import BM25Okapi

DEFAULT_KB_DIR: Path = Path(__file__).resolve().parent / "kb"
EXCERPT_CHARS = 300
TITLE_BOOST = 1.0

_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RUN_RE = re.compile(rf"^[{_CJK}]+$")
_FRONT_MATTER_RE = re.compile(r"\A---\s*\n.*?\n---\s*\n", re.DOTALL)
_STOP_WORDS = frozenset(
    "a an and are as at be by for from how in into is it its of on or that the this to was "
    "what when where which with per than then there these those can should must may".split()
)


@dataclass(frozen=True)
class KnowledgeDoc:
    """One knowledge-base document.

    Attributes:
        doc_id: The file stem (slug), e.g. "fan-laws".
        title: The text of the first-line ``# Title``.
        text: The Markdown body after the ``# Title`` line (the title is in ``title``).
        url: Stable link ``/kb/<doc_id>`` served by the app.
    """

    doc_id: str
    title: str
    text: str
    url: str


@dataclass(frozen=True)
class Hit:
    """One search result.

    Attributes:
        doc: The matching document.
        score: BM25 score, always > 0; higher is more relevant.
        excerpt: The paragraph (at most about 300 characters) with the most query-term hits.
    """

    doc: KnowledgeDoc
    score: float
    excerpt: str


def _stem(token: str) -> str:
    # Crude plural folding so "fan laws" matches "fan law"; applied to queries and documents alike.
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss") and token.isalpha():
        return token[:-1]
    return token


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


def _parse_document(path: Path) -> KnowledgeDoc:
    doc_id = path.stem
    if not _SLUG_RE.match(doc_id):
        raise ValueError(f"Knowledge-base file {path.name}: the file name must be a slug like 'fan-laws.md'")
    raw = path.read_text(encoding="utf-8").lstrip("\ufeff")
    raw = _FRONT_MATTER_RE.sub("", raw, count=1)
    lines = raw.strip().splitlines()
    if not lines or not lines[0].startswith("# ") or not lines[0][2:].strip():
        raise ValueError(f"Knowledge-base file {path.name}: the first line must be '# Title'")
    return KnowledgeDoc(
        doc_id=doc_id,
        title=lines[0][2:].strip(),
        text="\n".join(lines[1:]).strip(),
        url=f"/kb/{doc_id}",
    )


def load_documents(folder: Path = DEFAULT_KB_DIR) -> list[KnowledgeDoc]:
    """Load every ``*.md`` document of a knowledge-base folder, sorted by doc_id.

    Args:
        folder: Directory holding the Markdown files.

    Returns:
        The parsed documents.

    Raises:
        FileNotFoundError: If ``folder`` does not exist.
        ValueError: If a file name is not a slug or a file lacks a ``# Title`` first line.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"Knowledge-base folder not found: {folder}")
    return [_parse_document(p) for p in sorted(folder.glob("*.md"))]


class _BM25(BM25Okapi):
    """BM25Okapi with Lucene's always-positive IDF.

    The stock Okapi IDF ``log((N - n + 0.5) / (n + 0.5))`` is zero for a term in exactly
    half of the documents and negative above that. In a corpus of ten documents a
    core word like "methane" easily reaches that share and would then score nothing.
    """

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1.0 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


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


def _paragraphs(text: str) -> list[str]:
    out = []
    for block in re.split(r"\n\s*\n", text):
        block = _plain(block)
        # A bare heading says little on its own; the paragraph under it is the better excerpt.
        if block and not re.fullmatch(r"#+ .*", block):
            out.append(block)
    return out


def _window(paragraph: str, terms: set[str]) -> str:
    if len(paragraph) <= EXCERPT_CHARS:
        return paragraph
    lowered = paragraph.lower()
    positions = [lowered.find(t) for t in terms if t and lowered.find(t) >= 0]
    first = min(positions) if positions else 0
    start = max(0, first - EXCERPT_CHARS // 4)
    if start > 0:
        # Start on a word boundary so the excerpt does not begin mid-word.
        space = paragraph.rfind(" ", 0, start)
        start = space + 1 if space >= 0 else start
    end = min(len(paragraph), start + EXCERPT_CHARS)
    if end < len(paragraph):
        space = paragraph.rfind(" ", start, end)
        end = space if space > start else end
    return ("…" if start > 0 else "") + paragraph[start:end] + ("…" if end < len(paragraph) else "")


def make_excerpt(doc: KnowledgeDoc, query_tokens: list[str]) -> str:
    """Return the paragraph of ``doc`` with the most query-token hits, trimmed to ~300 chars.

    Args:
        doc: The document.
        query_tokens: Tokens from :func:`tokenize` of the query.

    Returns:
        The excerpt; the first paragraph when nothing matches.
    """
    terms = set(query_tokens)
    paragraphs = _paragraphs(doc.text) or [doc.title]
    best, best_hits = paragraphs[0], 0
    for para in paragraphs:
        hits = sum(1 for tok in tokenize(para) if tok in terms)
        if hits > best_hits:
            best, best_hits = para, hits
    # Longer terms first so the window centres on "methane", not on a stray bigram.
    return _window(best, {t for t in sorted(terms, key=len, reverse=True) if len(t) > 1} or terms)


class KnowledgeIndex:
    """A BM25 index over a fixed set of documents; build once, search many times.

    Args:
        docs: The documents to index.
    """

    def __init__(self, docs: list[KnowledgeDoc]) -> None:
        ids = [d.doc_id for d in docs]
        if len(set(ids)) != len(ids):
            raise ValueError("Knowledge-base doc_ids must be unique")
        self.docs: list[KnowledgeDoc] = list(docs)
        self._by_id = {d.doc_id: d for d in self.docs}
        corpus = [tokenize(f"{d.title}\n{d.text}") for d in self.docs]
        self._title_tokens = [frozenset(tokenize(d.title)) for d in self.docs]
        self._bm25 = _BM25(corpus) if self.docs else None

    @classmethod
    def from_folder(cls, folder: Path = DEFAULT_KB_DIR) -> KnowledgeIndex:
        """Build an index from the Markdown files of ``folder`` (see :func:`load_documents`)."""
        return cls(load_documents(folder))

    def get(self, doc_id: str) -> KnowledgeDoc | None:
        """Return the document with this id, or None."""
        return self._by_id.get(doc_id)

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        """Rank documents for a query with BM25.

        Args:
            query: Free text in English and/or Chinese.
            limit: Maximum number of hits (>= 1).

        Returns:
            Hits with score > 0 (BM25 plus title bonus), best first (ties keep doc_id
            order); empty when the
            query has no searchable tokens or nothing matches.

        Raises:
            ValueError: If ``limit`` < 1.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")
        tokens = tokenize(query or "")
        if not tokens or self._bm25 is None:
            return []
        scores = self._bm25.get_scores(tokens)
        query_set = set(tokens)
        idf = self._bm25.idf
        # Title bonus (a light BM25F): core words such as "methane" occur in most documents,
        # so body statistics alone barely separate the document that is *about* the topic.
        bonus = [
            TITLE_BOOST * sum(idf.get(t, 0.0) for t in query_set & title) for title in self._title_tokens
        ]
        ranked = sorted(
            ((float(s) + bonus[i], i) for i, s in enumerate(scores) if s > 0),
            key=lambda pair: (-pair[0], pair[1]),
        )
        return [
            Hit(doc=self.docs[i], score=score, excerpt=make_excerpt(self.docs[i], tokens))
            for score, i in ranked[:limit]
        ]


_INDEX: KnowledgeIndex | None = None
_INDEX_LOCK = threading.Lock()


def get_index() -> KnowledgeIndex:
    """Return the index of :data:`DEFAULT_KB_DIR`, built on first use and then cached."""
    global _INDEX
    if _INDEX is None:
        with _INDEX_LOCK:
            if _INDEX is None:
                _INDEX = KnowledgeIndex.from_folder(DEFAULT_KB_DIR)
    return _INDEX


def reset_index() -> None:
    """Drop the cached index so the next :func:`get_index` re-reads the folder."""
    global _INDEX
    with _INDEX_LOCK:
        _INDEX = None


def get_document(doc_id: str) -> KnowledgeDoc | None:
    """Return a knowledge-base document by id, for the app's ``/kb/<doc_id>`` route.

    Args:
        doc_id: The slug from the URL; anything that is not a known id (including
            path-like input) returns None, as no file path is built from it.

    Returns:
        The document, or None.
    """
    if not isinstance(doc_id, str) or not _SLUG_RE.match(doc_id):
        return None
    return get_index().get(doc_id)
