"""State of the knowledge-document page (route ``/kb/[doc_id]``), the target of citations.

A document has a Chinese and an English version under the same id and URL. The page shows the
one in the UI language unless ``?lang=en`` / ``?lang=zh-CN`` (or the page's link to the other
version) chose one: both versions are loaded, so the header's language switch or that link
changes the text at once.
"""

from __future__ import annotations

import asyncio
import logging

import reflex as rx

from ventapp.i18n import LANGS
from ventapp.tools.knowledge import KnowledgeDoc, get_document

logger = logging.getLogger(__name__)


def load_versions(doc_id: str) -> dict[str, KnowledgeDoc] | None:
    """Both language versions of a document (a missing translation is the English original).

    Args:
        doc_id: The slug from the URL.

    Returns:
        ``{"zh-CN": doc, "en": doc}``, or None for an unknown or malformed id.

    Raises:
        OSError, ValueError: When the knowledge-base folder cannot be read.
    """
    found = {lang: doc for lang in LANGS if (doc := get_document(doc_id, lang)) is not None}
    return found if len(found) == len(LANGS) else None


def chosen_lang(value: str | None) -> str:
    """``"zh-CN"`` or ``"en"`` for a ``?lang=`` value naming one exactly; ``""`` (follow the UI) otherwise."""
    return value if value in LANGS else ""


class KnowledgeState(rx.State):
    """The document named by the route's ``doc_id``, in both languages."""

    doc_key: str = ""
    title_zh: str = ""
    text_zh: str = ""
    title_en: str = ""
    text_en: str = ""
    doc_lang: str = ""
    """The version chosen by ``?lang=`` or the page's link; ``""`` shows the UI language's."""
    doc_found: bool = False
    doc_loaded: bool = False
    doc_problem: str = ""
    """``"load_failed"`` when the knowledge base could not be read; ``""`` otherwise."""

    @rx.event
    async def load_doc(self) -> None:
        """On load: look the document up (an unknown or malformed id is "not found")."""
        # `doc_id` is the dynamic route var Reflex installs for /kb/[doc_id].
        doc_id = str(getattr(self, "doc_id", "") or "")
        self.doc_key = doc_id
        self.doc_lang = chosen_lang(self.router.url.query_parameters.get("lang"))
        self.doc_loaded = False
        self.doc_problem = ""
        try:
            versions = await asyncio.to_thread(load_versions, doc_id)
        except Exception:  # a broken knowledge-base folder must not break the page
            logger.exception("could not load knowledge document %r", doc_id)
            versions = None
            self.doc_problem = "load_failed"  # worded by the page (kb.load_failed)
        self.doc_found = versions is not None
        zh, en = (versions["zh-CN"], versions["en"]) if versions else (None, None)
        self.title_zh, self.text_zh = (zh.title, zh.text) if zh else ("", "")
        self.title_en, self.text_en = (en.title, en.text) if en else ("", "")
        self.doc_loaded = True

    @rx.event
    def show_lang(self, lang: str) -> None:
        """The page's link to the other version: show ``lang`` ("zh-CN" | "en") whatever the UI language."""
        self.doc_lang = chosen_lang(lang) or self.doc_lang
