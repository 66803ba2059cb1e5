"""The top bar: product name, model, demo badge, history (phones), user, usage, new chat, language, colour mode.

DOM hooks: ``#user-chip``, ``#usage-link`` (to ``/usage``), ``#schedules-link`` (to ``/schedules``,
with ``#waiting-badge`` counting scheduled runs that wait for the user), ``#new-chat``,
``#lang-switch``, ``#color-mode``; ``#history-menu`` (phones).
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from ventapp.pages.components.lang import lang_switch, t
from ventapp.pages.components.model_controls import route_picker, settings_link
from ventapp.pages.components.phone_history import phone_history
from ventapp.pages.components.styles import HEADER_HEIGHT
from ventapp.state.auth_state import AuthState
from ventapp.state.chat_state import ChatState
from ventapp.state.model_state import ModelState
from ventapp.state.schedules_state import HandoffState
from ventapp.state.ui_identity import logout_offered, verified_mode

PHONE_ONLY = ["flex", "flex", "none"]
DESKTOP_ONLY = ["none", "none", "flex"]


def brand() -> rx.Component:
    """Logo mark and name."""
    return rx.hstack(
        rx.flex(
            rx.icon("wind", size=18),
            align="center",
            justify="center",
            width="30px",
            height="30px",
            background=rx.color("accent", 9),
            color="white",
            style={"border_radius": "9px"},
        ),
        # Phones keep the mark only: with the name, the last buttons ran off a 390 px screen.
        rx.heading(
            "VentAgent",
            size="4",
            weight="bold",
            class_name="brand-name",
            white_space="nowrap",
            display=["none", "block"],
        ),
        align="center",
        spacing="2",
    )


def model_badges() -> rx.Component:
    """The model name, a warning badge when it is the scripted demo model, or that none is configured."""
    return rx.hstack(
        rx.cond(
            ~ChatState.model_configured,
            rx.badge(
                rx.icon("bot-off", size=12),
                t("header.no_model"),
                color_scheme="red",
                variant="soft",
                class_name="no-model-badge",
                title=t("model.none_title"),
            ),
        ),
        rx.cond(
            ChatState.model_name != "",
            rx.badge(
                rx.icon("bot", size=12),
                # The open chat's route's model (MODELS), once the picker read the routes.
                rx.cond(ModelState.model_label != "", ModelState.model_label, ChatState.model_name),
                variant="surface",
                color_scheme="gray",
                class_name="model-name",
                display=["none", "inline-flex"],
            ),
        ),
        rx.cond(
            ChatState.demo_mode,
            rx.badge(
                rx.text(t("header.demo_model"), display=["none", "inline"]),
                rx.text(t("header.demo_short"), display=["inline", "none"]),
                color_scheme="amber",
                variant="soft",
                class_name="demo-badge",
                title=t("header.demo_hint"),
            ),
        ),
        spacing="2",
        align="center",
    )


def logout_button() -> rx.Component:
    """Log out (``AUTH_MODE=local`` only: in ``header`` mode the proxy signs people out, so none is
    shown; in ``none`` mode there is no login)."""
    if not logout_offered():
        return rx.fragment()
    return rx.button(
        rx.icon("log_out", size=14),
        variant="ghost",
        color_scheme="gray",
        on_click=AuthState.logout,
        id="logout",
        title=t("auth.logout"),
        aria_label=t("auth.logout"),
    )


def user_chip() -> rx.Component:
    """The current user's name; click to change it (``AUTH_MODE=none``), or the verified name and a
    logout button (``local``/``header``: the name comes from the server)."""
    if verified_mode():
        return rx.hstack(
            rx.text(
                ChatState.user_name,
                size="2",
                id="user-chip",
                title=t("auth.signed_in_as", name=ChatState.user_name),
                display=["none", "inline"],
            ),
            logout_button(),
            align="center",
            spacing="1",
        )
    return rx.button(
        rx.icon("user_round", size=14),
        rx.text(
            rx.cond(ChatState.user_name != "", ChatState.user_name, t("header.set_name")),
            display=["none", "inline"],
            style={
                "max_width": "9rem",
                "overflow": "hidden",
                "text_overflow": "ellipsis",
                "white_space": "nowrap",
            },
        ),
        variant="ghost",
        color_scheme="gray",
        on_click=ChatState.open_name_dialog,
        class_name="user-chip",
        id="user-chip",
        title=t("header.change_name"),
        aria_label=rx.cond(
            ChatState.user_name != "", t("header.user_named", name=ChatState.user_name), t("header.set_name")
        ),
    )


def usage_link() -> rx.Component:
    """To the usage page: today's tokens and cost against the quota, the ledger."""
    return rx.link(
        rx.icon_button(
            rx.icon("gauge", size=16),
            variant="ghost",
            color_scheme="gray",
            aria_label=t("nav.usage"),
            tab_index=-1,
        ),
        href="/usage",
        id="usage-link",
        title=t("nav.usage_hint"),
        aria_label=t("nav.usage"),
    )


def schedules_link() -> rx.Component:
    """To the schedules page, with the count of scheduled runs that wait for this user."""
    return rx.link(
        rx.box(
            rx.icon_button(
                rx.icon("calendar_clock", size=16),
                variant="ghost",
                color_scheme="gray",
                aria_label=t("nav.schedules"),
                tab_index=-1,
            ),
            rx.cond(
                HandoffState.waiting_count > 0,
                rx.badge(
                    HandoffState.waiting_count,
                    color_scheme="amber",
                    variant="solid",
                    radius="full",
                    size="1",
                    id="waiting-badge",
                    position="absolute",
                    top="-6px",
                    right="-8px",
                ),
            ),
            position="relative",
        ),
        href="/schedules",
        id="schedules-link",
        title=t("nav.schedules"),
        aria_label=rx.cond(
            HandoffState.waiting_count > 0,
            t("nav.waiting", count=HandoffState.waiting_count),
            t("nav.schedules"),
        ),
    )


def color_mode_button() -> rx.Component:
    """Light / dark, named for screen readers (the icon alone says nothing)."""
    return rx.color_mode.button(
        variant="ghost",
        color_scheme="gray",
        id="color-mode",
        aria_label=t("header.color_mode"),
        title=t("header.color_mode"),
    )


def header() -> rx.Component:
    """The sticky top bar of the chat page."""
    return rx.hstack(
        phone_history(),
        brand(),
        model_badges(),
        route_picker(),
        rx.spacer(),
        user_chip(),
        schedules_link(),
        usage_link(),
        settings_link(),
        rx.button(
            rx.icon("square_pen", size=16),
            rx.text(t("header.new_chat"), display=["none", "inline"]),
            id="new-chat",
            title=t("header.new_chat"),
            aria_label=t("header.new_chat"),
            variant="soft",
            on_click=ChatState.new_chat,
            disabled=ChatState.is_streaming,
        ),
        lang_switch(ChatState.relocalise),
        color_mode_button(),
        align="center",
        spacing=rx.breakpoints(initial="2", sm="3"),
        padding_x=["0.75rem", "1rem"],
        height=HEADER_HEIGHT,
        width="100%",
        flex_shrink="0",
        border_bottom=f"1px solid {rx.color('gray', 4)}",
        background=rx.color("gray", 1),
        class_name="chat-header",
    )


def page_bar(
    icon: str, title: rx.Var[str], user_name: rx.Var[str] | None, *after: Any, signed_in: bool | None = None
) -> rx.Component:
    """The top bar of the pages beside the chat (usage, schedules, knowledge, not found).

    Args:
        icon: Lucide icon of the page's badge.
        title: The page's name.
        user_name: Who is signed in, shown as a chip; None on pages that are not per user.
        *after: Handlers the language switch runs after switching (they re-word server text).
        signed_in: Whether the page is for signed-in people, so it offers the chat's logout
            (:func:`logout_button`); default: when it names its user.
    """
    return rx.hstack(
        rx.link(brand(), href="/", underline="none", color="inherit", aria_label=t("nav.home")),
        rx.badge(rx.icon(icon, size=12), title, variant="soft"),
        rx.spacer(),
        rx.cond(
            user_name != "",
            rx.badge(
                rx.icon("user_round", size=12),
                user_name,
                variant="surface",
                color_scheme="gray",
                display=["none", "inline-flex"],
            ),
        )
        if user_name is not None
        else rx.fragment(),
        rx.link(
            rx.icon("message_square", size=14),
            rx.text(t("nav.chat"), display=["none", "inline"]),
            href="/",
            aria_label=t("nav.chat"),
            class_name="back-to-chat",
            display="inline-flex",
            align_items="center",
            gap="0.35rem",
            size="2",
            weight="medium",
        ),
        lang_switch(*after),
        color_mode_button(),
        logout_button() if (user_name is not None if signed_in is None else signed_in) else rx.fragment(),
        align="center",
        spacing=rx.breakpoints(initial="2", sm="3"),
        height=HEADER_HEIGHT,
        padding_x=["0.75rem", "1rem"],
        border_bottom=f"1px solid {rx.color('gray', 4)}",
        background=rx.color("gray", 1),
        width="100%",
        class_name="page-bar",
    )
