"""The message box, the empty-state welcome and the "no model configured" callout."""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.styles import CONTENT_MAX_WIDTH
from ventapp.state.chat_state import ChatState

# Enter sends, Shift+Enter adds a line. Never while an IME is composing (Chinese input
# confirms candidates with Enter), never while a run streams (the Stop button replaces Send:
# the text stays in the box), never for blank text.
_ENTER_SENDS = rx.Var(
    """(e) => {
  if (e.key !== "Enter" || e.shiftKey || e.nativeEvent.isComposing || e.keyCode === 229) return;
  e.preventDefault();
  const form = e.target.form;
  const send = form ? form.querySelector("#send") : null;
  if (!form || !send || send.disabled || e.target.value.trim() === "") return;
  form.requestSubmit();
}"""
)

SUGGESTIONS: tuple[tuple[str, str, str], ...] = (
    (
        "calculator",
        "Airflow for a room",
        "Please calculate (12*8*3)*6/3600, the airflow in m³/s for a 12×8×3 m room at 6 ACH",
    ),
    ("search", "Fresh-air requirement", "Search the knowledge base: fresh air requirement per person"),
    ("book_open", "Methane limits", "What is the methane limit in a return airway?"),
)


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
            aria_label="Stop",
            title="Stop the answer (what it wrote so far is kept)",
        ),
        rx.icon_button(
            rx.icon("arrow_up", size=18),
            id="send",
            type="submit",
            size="3",
            radius="full",
            aria_label="Send",
        ),
    )


def composer() -> rx.Component:
    """Textarea ``#chat-input`` and button ``#send`` (``#stop`` while a run streams)."""
    return rx.box(
        rx.form(
            rx.hstack(
                rx.text_area(
                    id="chat-input",
                    name="message",
                    placeholder="Ask about airflow, fans, gas limits…",
                    auto_height=True,
                    rows="1",
                    size="3",
                    variant="soft",
                    max_length=100_000,
                    custom_attrs={"on_key_down": _ENTER_SENDS},
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
            on_submit=ChatState.send,
            reset_on_submit=True,
            width="100%",
        ),
        rx.text(
            "Enter to send · Shift+Enter for a new line · VentAgent can make mistakes: check figures against "
            "the cited sources and your standards.",
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
                rx.text("No model is configured.", weight="bold"),
                rx.text(
                    "Set ",
                    rx.code("OPENAI_BASE_URL"),
                    ", ",
                    rx.code("OPENAI_API_KEY"),
                    " and ",
                    rx.code("MODEL_NAME"),
                    " in ",
                    rx.code(".env"),
                    " and restart — or run ",
                    rx.code("make demo"),
                    " to try the scripted demo model. Messages you send now will fail with an explanation.",
                ),
            ),
            color_scheme="amber",
            class_name="model-callout",
            width="100%",
        ),
    )


def _suggestion(icon: str, title: str, prompt: str) -> rx.Component:
    return rx.card(
        rx.hstack(
            rx.icon(icon, size=16, color=rx.color("accent", 10), flex_shrink="0"),
            rx.vstack(
                rx.text(title, size="2", weight="medium"),
                rx.text(prompt, size="1", color_scheme="gray", trim="both"),
                spacing="1",
            ),
            align="start",
            spacing="2",
        ),
        as_child=False,
        on_click=ChatState.send_suggestion(prompt),
        cursor="pointer",
        class_name="suggestion",
        _hover={"background": rx.color("accent", 2)},
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
        rx.heading("How can I help with your ventilation work?", size="6", text_align="center"),
        rx.text(
            "Airflow and fan calculations, gas limits, regulations — answers cite the knowledge base.",
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
