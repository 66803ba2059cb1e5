"""The page for an address the app does not have: the app's frame, a sentence and a way back.

DOM hooks: ``#not-found`` with the link ``#not-found-home``.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.header import page_bar
from ventapp.pages.components.lang import t
from ventapp.pages.components.styles import CONTENT_MAX_WIDTH


def not_found_page() -> rx.Component:
    """Reflex serves this for every unknown route (``route="404"``)."""
    return rx.box(
        page_bar("compass", t("page.not_found_title"), None),
        rx.vstack(
            rx.icon("compass", size=36, color=rx.color("gray", 9)),
            rx.heading(t("page.not_found_title"), as_="h1", size="6"),
            rx.text(t("page.not_found_body"), color_scheme="gray", text_align="center"),
            rx.button(
                rx.link(rx.icon("arrow_left", size=14), t("nav.back_to_chat"), href="/", id="not-found-home"),
                variant="soft",
                as_child=True,
            ),
            align="center",
            spacing="3",
            padding_top="12vh",
            max_width=CONTENT_MAX_WIDTH,
            margin_x="auto",
            padding_x="1rem",
            id="not-found",
        ),
        min_height="100dvh",
        background=rx.color("gray", 1),
    )
