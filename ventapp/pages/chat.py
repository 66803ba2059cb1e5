"""The chat page (route ``/``): sidebar, header, transcript, composer.

The live bubble is on screen while a run streams and while a paused run waits on its card.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.composer import composer, model_callout, welcome
from ventapp.pages.components.header import header
from ventapp.pages.components.lang import t
from ventapp.pages.components.message import live_bubble, message_row
from ventapp.pages.components.model_controls import endpoint_banner
from ventapp.pages.components.page_frame import starting_notice
from ventapp.pages.components.session_bar import session_bar
from ventapp.pages.components.sidebar import name_dialog, sidebar
from ventapp.pages.components.styles import CONTENT_MAX_WIDTH
from ventapp.state.auth_state import AuthState
from ventapp.state.chat_state import ChatState
from ventapp.state.schedules_state import HandoffState


def transcript() -> rx.Component:
    """Finished messages, then the streaming answer; scrolls along while it grows."""
    return rx.auto_scroll(
        rx.vstack(
            model_callout(),
            rx.cond(
                (ChatState.messages.length() == 0) & ~ChatState.live_open,
                welcome(),
            ),
            rx.foreach(ChatState.messages, message_row),
            rx.cond(ChatState.live_open, live_bubble()),
            spacing="5",
            width="100%",
            max_width=CONTENT_MAX_WIDTH,
            margin_x="auto",
            padding=["1rem 0.75rem", "1.5rem 1rem"],
        ),
        id="transcript",
        class_name="transcript",
        flex="1",
        min_height="0",
        width="100%",
    )


def live_elsewhere_notice() -> rx.Component:
    """``.live-elsewhere``: a message was refused because the session answers elsewhere; ``#follow-live``
    follows it. Once that answer ended (``.live-elsewhere-ended``) it says the message can be sent now."""
    return rx.cond(
        ChatState.live_elsewhere,
        rx.callout.root(
            rx.callout.icon(rx.icon("radio")),
            rx.callout.text(
                rx.cond(ChatState.elsewhere_ended, t("chat.live_elsewhere_ended"), t("chat.live_elsewhere"))
            ),
            rx.cond(
                ChatState.elsewhere_ended,
                rx.fragment(),
                rx.button(
                    t("chat.follow_live"),
                    id="follow-live",
                    size="1",
                    variant="soft",
                    on_click=ChatState.follow_elsewhere,
                ),
            ),
            class_name=rx.cond(
                ChatState.elsewhere_ended, "live-elsewhere live-elsewhere-ended", "live-elsewhere"
            ),
            role="status",
            color_scheme="amber",
            size="1",
            width="100%",
            max_width=CONTENT_MAX_WIDTH,
            margin_x="auto",
        ),
    )


def refused_note() -> rx.Component:
    """``.resend-refused``: an edit or regenerate was not sent; the conversation is shown as it was."""
    return rx.cond(
        ChatState.refused_note != "",
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle_alert")),
            rx.callout.text(ChatState.refused_note),
            class_name="resend-refused",
            role="alert",
            color_scheme="amber",
            size="1",
            width="100%",
            max_width=CONTENT_MAX_WIDTH,
            margin_x="auto",
        ),
    )


VISUALLY_HIDDEN = {
    "position": "absolute",
    "width": "1px",
    "height": "1px",
    "padding": "0",
    "margin": "-1px",
    "overflow": "hidden",
    "clip": "rect(0, 0, 0, 0)",
    "white_space": "nowrap",
    "border": "0",
}


def announcer() -> rx.Component:
    """The page's one live region: screen readers hear when an answer completes, fails or waits."""
    return rx.box(
        ChatState.announcement, id="announcer", role="status", aria_live="polite", style=VISUALLY_HIDDEN
    )


def chat_page() -> rx.Component:
    """The whole chat screen; its ``on_load`` reads the model facts and the user's sessions."""
    return rx.flex(
        sidebar(),
        rx.flex(
            header(),
            starting_notice(),
            endpoint_banner(),
            transcript(),
            live_elsewhere_notice(),
            refused_note(),
            session_bar(),
            composer(),
            direction="column",
            flex="1",
            min_width="0",
            height="100%",
        ),
        name_dialog(),
        announcer(),
        rx.window_event_listener(on_focus=ChatState.catch_up_on_focus),
        height="100dvh",
        width="100%",
        overflow="hidden",
        background=rx.color("gray", 1),
        on_mount=[AuthState.check_login, ChatState.load_page, HandoffState.refresh],
    )
