"""A knowledge-base document (route ``/kb/[doc_id]``): where citations link to."""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.header import brand
from ventapp.pages.components.styles import CONTENT_MAX_WIDTH, markdown
from ventapp.state.knowledge_state import KnowledgeState


def _back_link() -> rx.Component:
    return rx.link(
        rx.hstack(
            rx.icon("arrow_left", size=14), rx.text("Back to chat", size="2"), align="center", spacing="1"
        ),
        href="/",
        class_name="kb-back",
        color_scheme="gray",
    )


def _document() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.badge(rx.icon("book_open", size=12), "Knowledge base", variant="soft"),
            rx.code(KnowledgeState.doc_key, size="1", variant="ghost", color_scheme="gray"),
            spacing="2",
            align="center",
        ),
        rx.heading(KnowledgeState.doc_title, size="7", class_name="kb-title"),
        rx.box(markdown(KnowledgeState.doc_text), width="100%", class_name="kb-body"),
        spacing="3",
        width="100%",
        class_name="kb-document",
    )


def _not_found() -> rx.Component:
    return rx.vstack(
        rx.icon("file_text", size=36, color=rx.color("gray", 9)),
        rx.heading("Document not found", size="5"),
        rx.text(
            rx.cond(
                KnowledgeState.doc_problem != "",
                KnowledgeState.doc_problem,
                "There is no knowledge-base document with this id. It may have been renamed or removed.",
            ),
            color_scheme="gray",
            text_align="center",
        ),
        rx.link(rx.button("Back to chat", variant="soft"), href="/"),
        align="center",
        spacing="3",
        padding_top="10vh",
        class_name="kb-not-found",
    )


def knowledge_page() -> rx.Component:
    """Title, back link and the document's Markdown; a friendly "not found" for unknown ids."""
    return rx.box(
        rx.hstack(
            rx.link(brand(), href="/", underline="none", color="inherit"),
            rx.spacer(),
            rx.color_mode.button(variant="ghost", color_scheme="gray"),
            align="center",
            height="3.5rem",
            padding_x=["0.75rem", "1rem"],
            border_bottom=f"1px solid {rx.color('gray', 4)}",
        ),
        rx.box(
            _back_link(),
            rx.box(
                rx.cond(
                    KnowledgeState.doc_loaded,
                    rx.cond(KnowledgeState.doc_found, _document(), _not_found()),
                    rx.center(rx.spinner(size="3"), padding_top="10vh"),
                ),
                margin_top="1rem",
            ),
            max_width=CONTENT_MAX_WIDTH,
            margin_x="auto",
            padding=["1rem 0.75rem 3rem", "1.5rem 1rem 4rem"],
        ),
        min_height="100dvh",
        background=rx.color("gray", 1),
        on_mount=KnowledgeState.load_doc,
    )
