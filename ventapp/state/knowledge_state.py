"""State of the knowledge-document page (route ``/kb/[doc_id]``), the target of citations."""

from __future__ import annotations

import asyncio
import logging

import reflex as rx

from ventapp.tools.knowledge import get_document

logger = logging.getLogger(__name__)


class KnowledgeState(rx.State):
    """The document named by the route's ``doc_id``."""

    doc_key: str = ""
    doc_title: str = ""
    doc_text: str = ""
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
        self.doc_loaded = False
        self.doc_problem = ""
        try:
            doc = await asyncio.to_thread(get_document, doc_id)
        except Exception:  # a broken knowledge-base folder must not break the page
            logger.exception("could not load knowledge document %r", doc_id)
            doc = None
            self.doc_problem = "load_failed"  # worded by the page (kb.load_failed)
        self.doc_found = doc is not None
        self.doc_title = doc.title if doc is not None else ""
        self.doc_text = doc.text if doc is not None else ""
        self.doc_loaded = True
