"""A knowledge-base document (route ``/kb/[doc_id]``): where citations link to."""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.header import page_bar
from ventapp.pages.components.lang import t
from ventapp.pages.components.page_frame import page_frame
from ventapp.pages.components.styles import markdown
from ventapp.state.knowledge_state import KnowledgeState


def _back_link() -> rx.Component:
    return rx.link(
        rx.hstack(
            rx.icon("arrow_left", size=14),
            rx.text(t("nav.back_to_chat"), size="2"),
            align="center",
            spacing="1",
        ),
        href="/",
        class_name="kb-back",
        color_scheme="gray",
    )


def _document() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.badge(rx.icon("book_open", size=12), t("kb.badge"), variant="soft"),
            rx.code(KnowledgeState.doc_key, size="1", variant="ghost", color_scheme="gray"),
            spacing="2",
            align="center",
        ),
        rx.heading(KnowledgeState.doc_title, as_="h1", size="7", class_name="kb-title"),
        rx.box(markdown(KnowledgeState.doc_text), width="100%", class_name="kb-body"),
        spacing="3",
        width="100%",
        class_name="kb-document",
    )


def _not_found() -> rx.Component:
    return rx.vstack(
        rx.icon("file_text", size=36, color=rx.color("gray", 9)),
        rx.heading(t("kb.not_found"), as_="h1", size="5"),
        rx.text(
            rx.cond(
                KnowledgeState.doc_problem != "",
                t("kb.load_failed"),
                t("kb.not_found_body"),
            ),
            color_scheme="gray",
            text_align="center",
        ),
        rx.button(rx.link(t("nav.back_to_chat"), href="/"), variant="soft", as_child=True),
        align="center",
        spacing="3",
        padding_top="10vh",
        class_name="kb-not-found",
    )


def knowledge_page() -> rx.Component:
    """Title, back link and the document's Markdown; a friendly "not found" for unknown ids."""
    return page_frame(
        page_bar("book_open", t("kb.badge"), None, signed_in=True),
        _back_link(),
        rx.box(
            rx.cond(
                KnowledgeState.doc_loaded,
                rx.cond(KnowledgeState.doc_found, _document(), _not_found()),
                rx.center(rx.spinner(size="3"), padding_top="10vh"),
            ),
            margin_top="1rem",
        ),
        on_mount=KnowledgeState.load_doc,
    )
