"""A knowledge-base document (route ``/kb/[doc_id]``): where citations link to.

The document comes in the UI language, or in the one ``?lang=`` names; a link under the title
shows the other version (DOM hook ``#kb-other-lang``), and the document's box carries its ``lang``.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.header import page_bar
from ventapp.pages.components.lang import active_lang, t
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


def _shown_lang() -> rx.Var[str]:
    """The version on screen: the one chosen (``?lang=`` or the link), else the UI language's."""
    return rx.cond(KnowledgeState.doc_lang != "", KnowledgeState.doc_lang, active_lang()).to(str)


def _other_version(shown: rx.Var[str]) -> rx.Component:
    other = rx.cond(shown == "en", "zh-CN", "en").to(str)
    return rx.link(
        rx.hstack(
            rx.icon("languages", size=14),
            rx.text(rx.cond(shown == "en", t("kb.read_zh"), t("kb.read_en")), size="2"),
            align="center",
            spacing="1",
        ),
        href="/kb/" + KnowledgeState.doc_key + "?lang=" + other,
        on_click=KnowledgeState.show_lang(other),
        id="kb-other-lang",
        color_scheme="gray",
    )


def _document() -> rx.Component:
    shown = _shown_lang()
    is_en = shown == "en"
    return rx.vstack(
        rx.hstack(
            rx.badge(rx.icon("book_open", size=12), t("kb.badge"), variant="soft"),
            rx.code(KnowledgeState.doc_key, size="1", variant="ghost", color_scheme="gray"),
            spacing="2",
            align="center",
        ),
        rx.heading(
            rx.cond(is_en, KnowledgeState.title_en, KnowledgeState.title_zh),
            as_="h1",
            size="7",
            class_name="kb-title",
        ),
        _other_version(shown),
        rx.box(
            markdown(rx.cond(is_en, KnowledgeState.text_en, KnowledgeState.text_zh).to(str)),
            width="100%",
            class_name="kb-body",
        ),
        spacing="3",
        width="100%",
        class_name="kb-document",
        custom_attrs={"lang": shown},
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
