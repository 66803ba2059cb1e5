"""A small, local ventilation-engineering knowledge base in Chinese and English, with BM25 search.

Two sets of Markdown documents, one per language, with the same document ids:

* English (the original): the files in :data:`DEFAULT_KB_DIR` (``ventapp/tools/kb/*.md``);
* Simplified Chinese: its faithful translation, ``ventapp/tools/kb/zh-CN/*.md`` (:func:`kb_folder`).

Document format (no front matter is used):

* The file stem is the document id and must be a slug (``[a-z0-9-]+``), e.g.
  ``fan-laws.md`` -> ``fan-laws``; a document's two language versions share it. The app
  serves the document at ``/kb/<doc_id>``, which is its stable citation URL in both languages.
* The first non-empty line is ``# Title``. A leading ``---`` front-matter block is
  tolerated and skipped, but nothing in it is used.
* The English body keeps Chinese terms in brackets, e.g. "methane [瓦斯]"; the Chinese body
  uses the Chinese mining terms (瓦斯, 需风量, 风阻 ...) and keeps formulas, units and sources.
* Each fact or formula names its source in the text (book, standard, regulation).
* The Chinese twin keeps the English block structure, paragraph for paragraph (same headings,
  lists, tables, blank lines), and every number of each English paragraph, so excerpts of the
  two versions line up (tests/tools/test_knowledge_i18n.py checks both).

Search: BM25 (``rank_bm25.BM25Okapi``) over title + body, plus a bonus of
``TITLE_BOOST`` × IDF for each query term found in the title. The tokeniser lower-cases,
NFKC-normalises, splits on non-alphanumerics, strips a plural "s", drops a few stop words, and turns
each run of CJK characters into single characters plus bigrams, because Chinese is
written without spaces. :func:`search` scores a query's Latin-script words against the English
set and its Chinese characters against the Chinese set and adds the two (so an English query in a
Chinese run, or a Chinese one in an English run, still finds the document), and returns each hit
in the language asked for: ``knowledge_search`` asks for the run's
(:func:`ventapp.tools.run_language.run_language`), and :func:`kb_source` titles the calculation
tools' citations the same way.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from rank_bm25 import BM25Okapi

# Re-exported (the redundant aliases say so): callers and tests use them from here.
from ventapp.tools._kb_text import EXCERPT_CHARS as EXCERPT_CHARS
from ventapp.tools._kb_text import is_cjk, term_weight, window
from ventapp.tools._kb_text import paragraphs as paragraphs
from ventapp.tools._kb_text import tokenize as tokenize
from ventapp.tools.registry import source
from ventapp.tools.run_language import run_language

DEFAULT_KB_DIR: Path = Path(__file__).resolve().parent / "kb"
"""The English documents; the Chinese ones are in its ``zh-CN`` sub-folder (:func:`kb_folder`)."""
LANGS: tuple[str, ...] = ("zh-CN", "en")
"""The knowledge base's languages (Chinese first, the spec's default), as :mod:`ventapp.i18n` names them."""
SOURCE_LANG = "en"
"""The language of the original documents; the other set is their translation."""
TITLE_BOOST = 1.0

_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FRONT_MATTER_RE = re.compile(r"\A---\s*\n.*?\n---\s*\n", re.DOTALL)


@dataclass(frozen=True)
class KnowledgeDoc:
    """One knowledge-base document.

    Attributes:
        doc_id: The file stem (slug), e.g. "fan-laws".
        title: The text of the first-line ``# Title``.
        text: The Markdown body after the ``# Title`` line (the title is in ``title``).
        url: Stable link ``/kb/<doc_id>`` served by the app (the same for both languages).
        lang: The language of ``title`` and ``text``: ``"en"`` or ``"zh-CN"``.
    """

    doc_id: str
    title: str
    text: str
    url: str
    lang: str = SOURCE_LANG


@dataclass(frozen=True)
class Hit:
    """One search result.

    Attributes:
        doc: The matching document.
        score: BM25 score, always > 0; higher is more relevant.
        excerpt: The paragraph (at most about 300 characters) with the most query-term hits, in
            the language of ``doc``.
    """

    doc: KnowledgeDoc
    score: float
    excerpt: str


def _check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"Unknown knowledge-base language {lang!r}; use one of {', '.join(LANGS)}")
    return lang


def kb_folder(lang: str, root: Path = DEFAULT_KB_DIR) -> Path:
    """The folder of one language's documents.

    Args:
        lang: ``"en"`` (the original set, ``root`` itself) or ``"zh-CN"`` (``root/zh-CN``).
        root: The knowledge-base folder.

    Raises:
        ValueError: For any other language.
    """
    return Path(root) if _check_lang(lang) == SOURCE_LANG else Path(root) / lang


def _parse_document(path: Path, lang: str) -> KnowledgeDoc:
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
        lang=lang,
    )


def load_documents(folder: Path = DEFAULT_KB_DIR, lang: str = SOURCE_LANG) -> list[KnowledgeDoc]:
    """Load every ``*.md`` document of a knowledge-base folder (not its sub-folders), sorted by doc_id.

    Args:
        folder: Directory holding the Markdown files.
        lang: The language the files are written in (see :func:`kb_folder`).

    Returns:
        The parsed documents.

    Raises:
        FileNotFoundError: If ``folder`` does not exist.
        ValueError: If a file name is not a slug, a file lacks a ``# Title`` first line, or
            ``lang`` is not one of :data:`LANGS`.
    """
    folder, lang = Path(folder), _check_lang(lang)
    if not folder.is_dir():
        raise FileNotFoundError(f"Knowledge-base folder not found: {folder}")
    return [_parse_document(p, lang) for p in sorted(folder.glob("*.md"))]


class _BM25(BM25Okapi):
    """BM25Okapi with Lucene's always-positive IDF.

    The stock Okapi IDF ``log((N - n + 0.5) / (n + 0.5))`` is zero for a term in exactly
    half of the documents and negative above that. In a corpus of ten documents a
    core word like "methane" easily reaches that share and would then score nothing.
    """

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1.0 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


def make_excerpt(
    doc: KnowledgeDoc,
    query_tokens: list[str],
    twin: KnowledgeDoc | None = None,
    weights: dict[str, float] | None = None,
) -> str:
    """Return the paragraph of ``doc`` that best matches the query, trimmed to ~300 chars.

    A paragraph's match is the summed weight of the distinct query terms it contains.

    Args:
        doc: The document.
        query_tokens: Tokens from :func:`tokenize` of the query.
        twin: The same document in the other language, or None. When its paragraphs line up
            with ``doc``'s (same count), a paragraph's match is its English version's for the
            query's Latin-script words plus its Chinese version's for the query's Chinese
            characters, so an English query picks the right paragraph of a Chinese document and
            vice versa.
        weights: Query term -> weight (the searching index gives IDF); 1 per term when None.

    Returns:
        The excerpt, from ``doc``; the first paragraph when nothing matches.
    """
    terms = set(query_tokens)
    weights = {t: 1.0 for t in terms} if weights is None else {t: weights.get(t, 0.0) for t in terms}
    paras = paragraphs(doc.text) or [doc.title]
    twin_paras = paragraphs(twin.text) if twin is not None else []
    if twin is None or len(twin_paras) != len(paras):
        scored = [(para, term_weight(para, weights)) for para in paras]
    else:
        cjk = {t: w for t, w in weights.items() if is_cjk(t)}
        latin = {t: w for t, w in weights.items() if not is_cjk(t)}
        own, other = (cjk, latin) if doc.lang == "zh-CN" else (latin, cjk)
        scored = [
            (para, term_weight(para, own) + term_weight(twin_para, other))
            for para, twin_para in zip(paras, twin_paras, strict=True)
        ]
    best, best_match = paras[0], 0.0
    for para, match in scored:
        if match > best_match:
            best, best_match = para, match
    # Longer terms first so the window centres on "methane", not on a stray bigram.
    return window(best, {t for t in sorted(terms, key=len, reverse=True) if len(t) > 1} or terms)


class KnowledgeIndex:
    """A BM25 index over a fixed set of documents (one language); build once, search many times.

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
    def from_folder(cls, folder: Path = DEFAULT_KB_DIR, lang: str = SOURCE_LANG) -> KnowledgeIndex:
        """Build an index from the Markdown files of ``folder`` (see :func:`load_documents`)."""
        return cls(load_documents(folder, lang))

    def get(self, doc_id: str) -> KnowledgeDoc | None:
        """Return the document with this id, or None."""
        return self._by_id.get(doc_id)

    def idf(self, tokens: list[str]) -> dict[str, float]:
        """Each token's IDF in this index (0 for a token no document has)."""
        table = self._bm25.idf if self._bm25 is not None else {}
        return {t: table.get(t, 0.0) for t in tokens}

    def scores(self, tokens: list[str]) -> dict[str, float]:
        """BM25 plus title bonus per doc_id, for the documents that match at all (score > 0).

        Args:
            tokens: Tokens from :func:`tokenize` of the query.
        """
        if not tokens or self._bm25 is None:
            return {}
        bm25 = self._bm25.get_scores(tokens)
        query_set = set(tokens)
        idf = self._bm25.idf
        # Title bonus (a light BM25F): core words such as "methane" occur in most documents,
        # so body statistics alone barely separate the document that is *about* the topic.
        return {
            doc.doc_id: float(bm25[i]) + TITLE_BOOST * sum(idf.get(t, 0.0) for t in query_set & title)
            for i, (doc, title) in enumerate(zip(self.docs, self._title_tokens, strict=True))
            if bm25[i] > 0
        }

    def search(self, query: str, limit: int = 5) -> list[Hit]:
        """Rank this index's documents for a query with BM25.

        Args:
            query: Free text in English and/or Chinese.
            limit: Maximum number of hits (>= 1).

        Returns:
            Hits with score > 0 (BM25 plus title bonus), best first (ties keep doc_id
            order); empty when the query has no searchable tokens or nothing matches.

        Raises:
            ValueError: If ``limit`` < 1.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")
        tokens = tokenize(query or "")
        scores = self.scores(tokens)
        order = {doc.doc_id: i for i, doc in enumerate(self.docs)}
        ranked = sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
        idf = self.idf(tokens)
        return [
            Hit(
                doc=self._by_id[doc_id],
                score=score,
                excerpt=make_excerpt(self._by_id[doc_id], tokens, weights=idf),
            )
            for doc_id, score in ranked[:limit]
        ]


class KnowledgeBase:
    """Both language sets of the knowledge base, searched together, answered in one language.

    Args:
        indexes: One :class:`KnowledgeIndex` per language of :data:`LANGS` (a missing language
            counts as an empty set).
    """

    def __init__(self, indexes: dict[str, KnowledgeIndex]) -> None:
        self._indexes = {lang: indexes.get(lang) or KnowledgeIndex([]) for lang in LANGS}

    @classmethod
    def from_folder(cls, root: Path = DEFAULT_KB_DIR) -> KnowledgeBase:
        """Load both sets from ``root`` (see :func:`kb_folder`); a missing translation folder is empty.

        Raises:
            FileNotFoundError: If ``root`` (the English set) does not exist.
            ValueError: As :func:`load_documents`.
        """
        indexes = {}
        for lang in LANGS:
            folder = kb_folder(lang, root)
            if lang == SOURCE_LANG or folder.is_dir():
                indexes[lang] = KnowledgeIndex.from_folder(folder, lang)
        return cls(indexes)

    def index(self, lang: str) -> KnowledgeIndex:
        """The index of one language's documents (``ValueError`` for a language not in :data:`LANGS`)."""
        return self._indexes[_check_lang(lang)]

    def get(self, doc_id: str, lang: str) -> KnowledgeDoc | None:
        """The document in ``lang``; its other version when it has no translation yet; else None."""
        return self.index(lang).get(doc_id) or self.index(_other(lang)).get(doc_id)

    def search(self, query: str, limit: int = 5, lang: str = SOURCE_LANG) -> list[Hit]:
        """Rank documents by both versions' scores and return them in ``lang``.

        Each set answers for its own script: a document's score is its English version's score
        for the query's Latin-script words plus its Chinese version's score for the query's
        Chinese characters. So the ranking is the same whichever language the run speaks, a
        query in either language (models often search in English for a Chinese user) finds the
        document, and formula symbols in a Chinese text (``Q_face``) do not compete with English
        words. The hit's document and excerpt are in ``lang`` (the other version when there is
        no translation yet); the excerpt is chosen over both versions (:func:`make_excerpt`).

        Args:
            query: Free text in English and/or Chinese.
            limit: Maximum number of hits (>= 1).
            lang: The language to answer in, one of :data:`LANGS`.

        Returns:
            Hits with score > 0, best first (ties in doc_id order); empty when nothing matches.

        Raises:
            ValueError: If ``limit`` < 1 or ``lang`` is not one of :data:`LANGS`.
        """
        if limit < 1:
            raise ValueError("limit must be at least 1")
        own, twin = self.index(lang), self.index(_other(lang))
        tokens = tokenize(query or "")
        cjk = [t for t in tokens if is_cjk(t)]
        latin = [t for t in tokens if not is_cjk(t)]
        totals: dict[str, float] = {}
        for index_lang, words in (("zh-CN", cjk), ("en", latin)):
            for doc_id, score in self.index(index_lang).scores(words).items():
                totals[doc_id] = totals.get(doc_id, 0.0) + score
        ranked = sorted(totals.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]
        idf = {**self.index("zh-CN").idf(cjk), **self.index("en").idf(latin)}
        hits = []
        for doc_id, score in ranked:
            doc = own.get(doc_id) or twin.get(doc_id)
            other = twin.get(doc_id) if doc is own.get(doc_id) else None
            hits.append(Hit(doc=doc, score=score, excerpt=make_excerpt(doc, tokens, twin=other, weights=idf)))
        return hits


def _other(lang: str) -> str:
    return LANGS[1 - LANGS.index(_check_lang(lang))]


_BASE: KnowledgeBase | None = None
_BASE_LOCK = threading.Lock()


def get_knowledge_base() -> KnowledgeBase:
    """Both sets of :data:`DEFAULT_KB_DIR`, loaded on first use and then cached."""
    global _BASE
    if _BASE is None:
        with _BASE_LOCK:
            if _BASE is None:
                _BASE = KnowledgeBase.from_folder(DEFAULT_KB_DIR)
    return _BASE


def get_index(lang: str = SOURCE_LANG) -> KnowledgeIndex:
    """The cached index of one language's documents (default: the English originals)."""
    return get_knowledge_base().index(lang)


def reset_index() -> None:
    """Drop the cached knowledge base so the next use re-reads the folders."""
    global _BASE
    with _BASE_LOCK:
        _BASE = None


def search(query: str, limit: int = 5, lang: str = SOURCE_LANG) -> list[Hit]:
    """Search both language sets and answer in ``lang`` (see :meth:`KnowledgeBase.search`)."""
    return get_knowledge_base().search(query, limit, lang)


def get_document(doc_id: str, lang: str = SOURCE_LANG) -> KnowledgeDoc | None:
    """Return a knowledge-base document by id, for the app's ``/kb/<doc_id>`` route.

    Args:
        doc_id: The slug from the URL; anything that is not a known id (including
            path-like input) returns None, as no file path is built from it.
        lang: ``"en"`` or ``"zh-CN"``; a document without a translation comes in its other
            language (see :attr:`KnowledgeDoc.lang`).

    Returns:
        The document, or None.

    Raises:
        ValueError: If ``lang`` is not one of :data:`LANGS`.
    """
    _check_lang(lang)
    if not isinstance(doc_id, str) or not _SLUG_RE.match(doc_id):
        return None
    return get_knowledge_base().get(doc_id, lang)


def kb_source(doc_id: str, snippet: str, lang: str | None = None) -> dict:
    """A tool's citation of a knowledge-base document, titled as the document in the run's language.

    Args:
        doc_id: A document id, e.g. ``"fan-laws"``; its stable URL ``/kb/<doc_id>`` is the link.
        snippet: What the tool took from it (a formula, a chapter).
        lang: ``"zh-CN"`` or ``"en"``; default :func:`~ventapp.tools.run_language.run_language`.

    Returns:
        A :func:`~ventapp.tools.registry.source` entry, the same title ``knowledge_search`` gives.

    Raises:
        KeyError: If there is no such document (a tool citing a missing document is a bug).
    """
    doc = get_document(doc_id, lang or run_language())
    if doc is None:
        raise KeyError(f"No knowledge-base document {doc_id!r}")
    return source(doc.title, doc.url, snippet)
