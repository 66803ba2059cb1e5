"""The conversation list (large screens): search, pin, rename, delete; and the user-name dialog.

DOM hooks: ``#session-search``; ``.session-item`` with ``data-session-id``,
``data-active`` and ``data-pinned``; ``.session-title``; ``.waiting-mark`` on a session whose
scheduled run waits for the user; ``.session-menu`` (the ⋯
button) with items ``.session-rename``, ``.session-pin``, ``.session-delete``;
``#rename-input`` / ``#rename-save``; ``#delete-confirm`` / ``#delete-cancel``.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.confirm_dialog import confirm_dialog
from ventapp.pages.components.lang import IS_EN, t
from ventapp.pages.components.styles import SIDEBAR_WIDTH
from ventapp.state.chat_state import ChatState
from ventapp.state.schedules_state import HandoffState
from ventapp.state.sessions_state import MAX_TITLE_CHARS, SessionsState
from ventapp.state.ui_identity import verified_mode
from ventapp.state.views import SessionView


def _session_menu(session: rx.Var[SessionView]) -> rx.Component:
    return rx.menu.root(
        rx.menu.trigger(
            rx.icon_button(
                rx.icon("ellipsis", size=14),
                variant="ghost",
                color_scheme="gray",
                size="1",
                class_name="session-menu",
                aria_label=t("sidebar.actions_for", title=session.title),
            ),
        ),
        rx.menu.content(
            rx.menu.item(
                rx.icon("pencil", size=14),
                t("sidebar.rename"),
                class_name="session-rename",
                on_click=SessionsState.start_rename(session.id, session.title),
            ),
            rx.menu.item(
                rx.icon(rx.cond(session.pinned, "pin_off", "pin"), size=14),
                rx.cond(session.pinned, t("sidebar.unpin"), t("sidebar.pin")),
                class_name="session-pin",
                on_click=SessionsState.toggle_pin(session.id, session.pinned),
            ),
            rx.menu.separator(),
            rx.menu.item(
                rx.icon("trash_2", size=14),
                t("sidebar.delete"),
                color="red",
                class_name="session-delete",
                on_click=SessionsState.ask_delete(session.id, session.title),
            ),
            size="1",
            class_name="session-menu-content",  # closes without an exit animation: see ventagent.css
        ),
    )


ROW_BUTTON_STYLE = {
    "all": "unset",
    "box_sizing": "border-box",
    "cursor": "pointer",
    "flex": "1",
    "min_width": "0",
    "border_radius": "var(--radius-2)",
    "&:focus-visible": {"outline": f"2px solid {rx.color('accent', 8)}", "outline_offset": "2px"},
}
"""A session row opens with a real button (Tab, Enter, Space), drawn as plain text."""


def session_item(session: rx.Var[SessionView], phone: bool = False) -> rx.Component:
    """One conversation: a button that opens it and its ⋯ menu (in the phone drawer, opening closes it)."""
    active = session.id == ChatState.session_id
    opening = (
        [ChatState.open_session(session.id), SessionsState.set_history_open(False)]
        if phone
        else ChatState.open_session(session.id)
    )
    return rx.hstack(
        rx.el.button(
            rx.hstack(
                rx.cond(session.pinned, rx.icon("pin", size=12, flex_shrink="0", class_name="pin-mark")),
                rx.cond(
                    HandoffState.waiting_sessions.contains(session.id),
                    rx.icon(
                        "bell_ring",
                        size=12,
                        flex_shrink="0",
                        color=rx.color("amber", 10),
                        class_name="waiting-mark",
                        aria_label=t("sidebar.waiting"),
                    ),
                ),
                rx.text(
                    session.title,
                    size="2",
                    as_="span",
                    weight=rx.cond(active, "medium", "regular"),
                    class_name="session-title",
                    style={"overflow": "hidden", "text_overflow": "ellipsis", "white_space": "nowrap"},
                ),
                spacing="1",
                align="center",
            ),
            rx.text(session.updated, size="1", color_scheme="gray", as_="span", display="block"),
            type="button",
            on_click=opening,
            class_name="session-open",
            aria_current=rx.cond(active, "page", "false"),
            style=ROW_BUTTON_STYLE,
        ),
        _session_menu(session),
        key=session.id,  # pinning reorders the list: keep each menu's state with its own session
        class_name="session-item",
        data_session_id=session.id,
        data_active=rx.cond(active, "true", "false"),
        data_pinned=rx.cond(session.pinned, "true", "false"),
        align="center",
        spacing="1",
        padding="0.45rem 0.4rem 0.45rem 0.65rem",
        border_radius="var(--radius-2)",
        background=rx.cond(active, rx.color("accent", 4), "transparent"),
        _hover={"background": rx.cond(active, rx.color("accent", 4), rx.color("gray", 4))},
        width="100%",
    )


def session_list(phone: bool = False) -> rx.Component:
    """The search results while searching, else every conversation (pinned first)."""
    searching = SessionsState.search_query != ""
    return rx.cond(
        searching,
        rx.cond(
            SessionsState.search_results.length() > 0,
            rx.foreach(SessionsState.search_results, lambda found: session_item(found, phone)),
            rx.text(t("sidebar.no_match"), size="1", color_scheme="gray", padding="0.5rem 0.65rem"),
        ),
        rx.cond(
            ChatState.sessions.length() > 0,
            rx.foreach(ChatState.sessions, lambda listed: session_item(listed, phone)),
            rx.text(t("sidebar.empty"), size="1", color_scheme="gray", padding="0.5rem 0.65rem"),
        ),
    )


def search_box(element_id: str) -> rx.Component:
    """The title search (``#session-search``; ``#session-search-phone`` in the phone drawer)."""
    return rx.box(
        rx.input(
            rx.input.slot(rx.icon("search", size=14)),
            id=element_id,
            placeholder=t("sidebar.search"),
            aria_label=t("sidebar.search"),
            on_change=SessionsState.set_search.debounce(250),
            size="2",
            width="100%",
        ),
        padding="0.25rem 0.5rem 0.5rem",
        width="100%",
    )


def sidebar() -> rx.Component:
    """Past conversations of the current user, pinned first (hidden on phones; the header has a menu)."""
    return rx.vstack(
        rx.hstack(
            rx.icon("history", size=14),
            rx.heading(t("sidebar.title"), as_="h2", size="1", weight="medium", color=rx.color("gray", 11)),
            spacing="2",
            align="center",
            padding="0.9rem 0.75rem 0.25rem",
        ),
        search_box("session-search"),
        rx.vstack(
            session_list(),
            spacing="1",
            padding="0 0.5rem 0.75rem",
            width="100%",
            flex="1",
            min_height="0",
            overflow_y="auto",
        ),
        rename_dialog(),
        delete_dialog(),
        width=SIDEBAR_WIDTH,
        flex_shrink="0",
        height="100%",
        spacing="0",
        display=["none", "none", "flex"],
        border_right=f"1px solid {rx.color('gray', 4)}",
        background=rx.color("gray", 2),
        class_name="chat-sidebar",
    )


def rename_dialog() -> rx.Component:
    """Asks for a session's new title (1–200 characters)."""
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(t("sidebar.rename_title")),
            rx.form(
                rx.vstack(
                    rx.input(
                        id="rename-input",
                        name="title",
                        default_value=SessionsState.rename_value,
                        max_length=MAX_TITLE_CHARS,
                        auto_focus=True,
                        width="100%",
                        aria_label=t("sidebar.rename_title"),
                    ),
                    rx.cond(
                        SessionsState.rename_error != "",
                        rx.text(SessionsState.rename_error, size="1", color_scheme="red"),
                    ),
                    rx.hstack(
                        rx.button(
                            t("common.cancel"),
                            type="button",
                            variant="soft",
                            color_scheme="gray",
                            on_click=SessionsState.cancel_rename,
                        ),
                        rx.button(t("common.save"), type="submit", id="rename-save"),
                        justify="end",
                        width="100%",
                        spacing="3",
                    ),
                    spacing="3",
                ),
                on_submit=SessionsState.save_rename,
                reset_on_submit=False,
            ),
            max_width="26rem",
        ),
        open=SessionsState.rename_id != "",
        on_open_change=SessionsState.on_rename_open_change,
    )


def delete_dialog() -> rx.Component:
    """Confirms before a session is deleted with its history and files; says so when it is answering.

    A running conversation's button reads "Stop and delete" (:meth:`SessionsState.confirm_delete`).
    """
    return confirm_dialog(
        title=t("sidebar.delete_title"),
        body=rx.cond(
            SessionsState.delete_running,
            t("sidebar.delete_running_body", title=SessionsState.delete_title),
            t("sidebar.delete_body", title=SessionsState.delete_title),
        ),
        confirm=rx.cond(SessionsState.delete_running, t("sidebar.stop_and_delete"), t("sidebar.delete")),
        is_open=SessionsState.delete_id != "",
        on_open_change=SessionsState.on_delete_open_change,
        on_cancel=SessionsState.cancel_delete,
        on_confirm=SessionsState.confirm_delete,
        cancel_id="delete-cancel",
        confirm_id="delete-confirm",
    )


def name_dialog() -> rx.Component:
    """Asks for the user's name on the first visit (kept in localStorage) and when changing it.

    Only in ``AUTH_MODE=none``, where it says plainly that names are not verified; with accounts or
    a login proxy the name comes from the server and there is nothing to ask.
    """
    if verified_mode():
        return rx.fragment()
    must_ask = rx.State.is_hydrated & (ChatState.user_name == "")
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(t("name.title")),
            rx.dialog.description(
                t("name.body"),
                size="2",
                color_scheme="gray",
                margin_bottom="0.5rem",
            ),
            rx.text(
                t("auth.unverified"),
                size="1",
                color_scheme="amber",
                margin_bottom="1rem",
                id="unverified-note",
            ),
            rx.form(
                rx.vstack(
                    rx.input(
                        id="user-name",
                        name="user_name",
                        placeholder=t("name.placeholder"),
                        aria_label=t("name.label"),
                        default_value=ChatState.user_name,
                        max_length=128,
                        auto_focus=True,
                        size="3",
                        width="100%",
                    ),
                    rx.cond(
                        ChatState.name_error_en != "",
                        rx.text(
                            rx.cond(IS_EN, ChatState.name_error_en, ChatState.name_error_zh),
                            size="1",
                            color_scheme="red",
                            class_name="name-error",
                        ),
                    ),
                    rx.hstack(
                        rx.cond(
                            ChatState.user_name != "",
                            rx.button(
                                t("common.cancel"),
                                type="button",
                                variant="soft",
                                color_scheme="gray",
                                on_click=ChatState.close_name_dialog,
                            ),
                        ),
                        rx.button(t("common.save"), type="submit", id="user-name-save"),
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
