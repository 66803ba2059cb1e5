"""The message box, the empty-state welcome and the "no model configured" callout."""

from __future__ import annotations

import reflex as rx

from ventapp.agent.pipeline import MAX_MESSAGE_CHARS
from ventapp.pages.components.enter_sends import enter_sends
from ventapp.pages.components.lang import t
from ventapp.pages.components.length_notice import full_notice, hides_on_reset, shows_when_full
from ventapp.pages.components.session_bar import name_file_input, refuse_drop
from ventapp.pages.components.styles import CONTENT_MAX_WIDTH, markdown
from ventapp.state.chat_state import ChatState
from ventapp.state.sessions_state import DROP_ID, SessionsState

SUGGESTIONS: tuple[tuple[str, str], ...] = (
    ("calculator", "suggest.airflow"),
    ("search", "suggest.fresh_air"),
    ("book_open", "suggest.methane"),
)
"""Icon and message id of the empty state's prompts (``<id>.title``, ``<id>.prompt``)."""


def send_or_stop() -> rx.Component:
    """``#send``; while a run streams, ``#stop`` in its place (the partial answer is kept)."""
    return rx.cond(
        ChatState.is_streaming,
        rx.icon_button(
            rx.icon("square", size=14, fill="currentColor"),
            id="stop",
            type="button",
            size="3",
            radius="full",
            variant="soft",
            color_scheme="gray",
            on_click=ChatState.stop,
            aria_label=t("composer.stop"),
            title=t("composer.stop_hint"),
        ),
        rx.icon_button(
            rx.icon("arrow_up", size=18),
            id="send",
            type="submit",
            size="3",
            radius="full",
            aria_label=t("composer.send"),
        ),
    )


def drop_dialog() -> rx.Component:
    """Asks before a message is sent while a card waits: the pending call will be dropped."""
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title(t("composer.drop_title")),
            rx.alert_dialog.description(
                rx.cond(
                    ChatState.drop_confirm_fork >= 0, t("composer.drop_body_resend"), t("composer.drop_body")
                ),
                size="2",
            ),
            rx.hstack(
                rx.button(
                    t("common.cancel"),
                    variant="soft",
                    color_scheme="gray",
                    id="drop-cancel",
                    on_click=ChatState.cancel_drop,
                ),
                rx.button(t("composer.drop_confirm"), id="drop-confirm", on_click=ChatState.confirm_drop),
                justify="end",
                spacing="3",
                margin_top="1rem",
            ),
            max_width="26rem",
            class_name="drop-dialog",
        ),
        open=ChatState.drop_confirm_text != "",
        on_open_change=ChatState.on_drop_open_change,
    )


def composer() -> rx.Component:
    """Textarea ``#chat-input`` and button ``#send`` (``#stop`` while a run streams)."""
    form = rx.form(
        rx.hstack(
            rx.text_area(
                id="chat-input",
                name="message",
                placeholder=t("composer.placeholder"),
                aria_label=t("composer.label"),
                auto_height=True,
                rows="1",
                size="3",
                variant="soft",
                max_length=MAX_MESSAGE_CHARS,
                custom_attrs={"on_key_down": enter_sends("#send"), "on_change": shows_when_full()},
                flex="1",
                min_height="2.75rem",
                max_height="12rem",
                style={"resize": "none", "background": "transparent", "outline": "none"},
            ),
            send_or_stop(),
            align="end",
            spacing="2",
            padding="0.4rem",
            border=f"1px solid {rx.color('gray', 6)}",
            border_radius="1.5rem",
            background=rx.color("gray", 2),
            _focus_within={"border_color": rx.color("accent", 8)},
        ),
        on_submit=[ChatState.send, ChatState.sent],
        reset_on_submit=True,
        custom_attrs={"on_reset": hides_on_reset()},
        width="100%",
    )
    # Dropping files anywhere on the composer attaches them (no click or key opens a picker here).
    drop = rx.upload.root(
        form,
        id=DROP_ID,
        multiple=True,
        no_click=True,
        no_keyboard=True,
        max_size=ChatState.upload_max_bytes,  # a larger file is refused here, saying why (refuse_drop)
        on_drop=[SessionsState.drop_started, SessionsState.handle_upload(rx.upload_files(upload_id=DROP_ID))],
        on_drop_rejected=refuse_drop,
        class_name="composer-drop",
        width="100%",
    )
    return rx.box(
        name_file_input(drop, t("attach.hint")),
        drop_dialog(),
        full_notice(),
        rx.text(
            t("composer.hint"),
            size="1",
            color_scheme="gray",
            text_align="center",
            margin_top="0.4rem",
            display=["none", "block"],
        ),
        width="100%",
        max_width=CONTENT_MAX_WIDTH,
        margin_x="auto",
        padding=["0.5rem 0.75rem 0.75rem", "0.5rem 1rem 1rem"],
    )


def model_callout() -> rx.Component:
    """Shown while no model endpoint or key is configured."""
    return rx.cond(
        ~ChatState.model_configured,
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle_alert")),
            rx.callout.text(
                rx.text(t("model.none_title"), weight="bold"),
                markdown(t("model.none_body")),
            ),
            color_scheme="amber",
            class_name="model-callout",
            width="100%",
        ),
    )


def _suggestion(icon: str, key: str) -> rx.Component:
    prompt = t(f"{key}.prompt")
    return rx.card(
        rx.el.button(
            rx.hstack(
                rx.icon(icon, size=16, color=rx.color("accent", 10), flex_shrink="0"),
                rx.vstack(
                    rx.text(t(f"{key}.title"), size="2", weight="medium", as_="span"),
                    rx.text(prompt, size="1", color_scheme="gray", trim="both", as_="span"),
                    spacing="1",
                ),
                align="start",
                spacing="2",
            ),
            type="button",
            on_click=ChatState.send_suggestion(prompt),
            style={"all": "unset", "cursor": "pointer", "display": "block", "width": "100%"},
        ),
        as_child=False,
        class_name="suggestion",
        _hover={"background": rx.color("accent", 2)},
        _focus_within={"outline": f"2px solid {rx.color('accent', 8)}", "outline_offset": "2px"},
    )


def welcome() -> rx.Component:
    """The empty conversation: a greeting and a few one-click prompts."""
    return rx.vstack(
        rx.flex(
            rx.icon("wind", size=28),
            align="center",
            justify="center",
            width="56px",
            height="56px",
            background=rx.color("accent", 3),
            color=rx.color("accent", 11),
            style={"border_radius": "16px"},
        ),
        rx.heading(t("welcome.title"), as_="h1", size="6", text_align="center"),
        rx.text(
            t("welcome.body"),
            color_scheme="gray",
            size="2",
            text_align="center",
        ),
        rx.grid(
            *[_suggestion(*item) for item in SUGGESTIONS],
            columns=rx.breakpoints(initial="1", sm="3"),
            spacing="3",
            width="100%",
            margin_top="1rem",
        ),
        align="center",
        spacing="3",
        padding_top=["2rem", "12vh"],
        width="100%",
        class_name="welcome",
    )
