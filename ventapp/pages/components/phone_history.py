"""The conversations on a phone: a drawer with the same search, list and ⋯ menus (rename, pin,
delete) as the large-screen sidebar.

DOM hooks: ``#history-menu`` (the header's button, phones only), ``.phone-history`` (the drawer),
``#session-search-phone``; rows and menus as in :mod:`.sidebar`.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.lang import t
from ventapp.pages.components.sidebar import search_box, session_list
from ventapp.state.sessions_state import SessionsState

PHONE_ONLY = ["flex", "flex", "none"]


def phone_history() -> rx.Component:
    """The header's history button and the drawer it opens."""
    return rx.box(
        rx.drawer.root(
            rx.drawer.trigger(
                rx.icon_button(
                    rx.icon("history", size=16),
                    variant="ghost",
                    color_scheme="gray",
                    aria_label=t("header.history"),
                    id="history-menu",
                ),
            ),
            rx.drawer.overlay(z_index="40"),
            rx.drawer.portal(
                rx.drawer.content(
                    rx.vstack(
                        rx.hstack(
                            rx.drawer.title(t("sidebar.title"), size="3"),
                            rx.spacer(),
                            rx.drawer.close(
                                rx.icon_button(
                                    rx.icon("x", size=16),
                                    variant="ghost",
                                    color_scheme="gray",
                                    aria_label=t("common.close"),
                                )
                            ),
                            width="100%",
                            align="center",
                            padding="0.75rem 0.75rem 0.25rem",
                        ),
                        search_box("session-search-phone"),
                        rx.vstack(
                            session_list(phone=True), spacing="1", padding="0 0.5rem 0.75rem", width="100%"
                        ),
                        spacing="0",
                        width="100%",
                        height="100%",
                        overflow_y="auto",
                    ),
                    class_name="phone-history",
                    top="0",
                    left="0",
                    height="100%",
                    width="min(20rem, 85vw)",
                    z_index="50",
                    background=rx.color("gray", 2),
                ),
            ),
            direction="left",
            open=SessionsState.history_open,
            on_open_change=SessionsState.set_history_open,
        ),
        display=PHONE_ONLY,
    )
