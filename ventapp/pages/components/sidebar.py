"""The conversation list (large screens) and the user-name dialog."""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.styles import SIDEBAR_WIDTH
from ventapp.state.chat_state import ChatState
from ventapp.state.views import SessionView


def _session_item(session: rx.Var[SessionView]) -> rx.Component:
    active = session.id == ChatState.session_id
    return rx.box(
        rx.text(
            session.title,
            size="2",
            weight=rx.cond(active, "medium", "regular"),
            style={"overflow": "hidden", "text_overflow": "ellipsis", "white_space": "nowrap"},
        ),
        rx.text(session.updated, size="1", color_scheme="gray"),
        on_click=ChatState.open_session(session.id),
        class_name="session-item",
        data_session_id=session.id,
        data_active=rx.cond(active, "true", "false"),
        padding="0.45rem 0.65rem",
        border_radius="var(--radius-2)",
        cursor="pointer",
        background=rx.cond(active, rx.color("accent", 4), "transparent"),
        _hover={"background": rx.cond(active, rx.color("accent", 4), rx.color("gray", 4))},
        width="100%",
    )


def sidebar() -> rx.Component:
    """Past conversations of the current user (hidden on phones; the header has a menu there)."""
    return rx.vstack(
        rx.hstack(
            rx.icon("history", size=14),
            rx.text("Conversations", size="1", weight="medium", color_scheme="gray"),
            spacing="2",
            align="center",
            padding="0.9rem 0.75rem 0.25rem",
        ),
        rx.vstack(
            rx.cond(
                ChatState.sessions.length() > 0,
                rx.foreach(ChatState.sessions, _session_item),
                rx.text("No conversations yet.", size="1", color_scheme="gray", padding="0.5rem 0.65rem"),
            ),
            spacing="1",
            padding="0 0.5rem 0.75rem",
            width="100%",
            flex="1",
            min_height="0",
            overflow_y="auto",
        ),
        width=SIDEBAR_WIDTH,
        flex_shrink="0",
        height="100%",
        spacing="0",
        display=["none", "none", "flex"],
        border_right=f"1px solid {rx.color('gray', 4)}",
        background=rx.color("gray", 2),
        class_name="chat-sidebar",
    )


def name_dialog() -> rx.Component:
    """Asks for the user's name on the first visit (kept in localStorage) and when changing it."""
    must_ask = rx.State.is_hydrated & (ChatState.user_name == "")
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("What should we call you?"),
            rx.dialog.description(
                "Your name keeps your conversations together on this server. It is stored in this browser.",
                size="2",
                color_scheme="gray",
                margin_bottom="1rem",
            ),
            rx.form(
                rx.vstack(
                    rx.input(
                        id="user-name",
                        name="user_name",
                        placeholder="e.g. Li Wei",
                        default_value=ChatState.user_name,
                        max_length=128,
                        auto_focus=True,
                        size="3",
                        width="100%",
                    ),
                    rx.cond(
                        ChatState.name_error != "",
                        rx.text(ChatState.name_error, size="1", color_scheme="red", class_name="name-error"),
                    ),
                    rx.hstack(
                        rx.cond(
                            ChatState.user_name != "",
                            rx.button(
                                "Cancel",
                                type="button",
                                variant="soft",
                                color_scheme="gray",
                                on_click=ChatState.close_name_dialog,
                            ),
                        ),
                        rx.button("Save", type="submit", id="user-name-save"),
                        justify="end",
                        width="100%",
                        spacing="3",
                    ),
                    spacing="3",
                ),
                on_submit=ChatState.save_user_name,
            ),
            max_width="26rem",
        ),
        open=ChatState.name_dialog_open | must_ask,
        on_open_change=ChatState.on_name_dialog_change,
    )
