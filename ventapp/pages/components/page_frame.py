"""The frame every page but the chat shares (its top bar, then its content in the reading column), and
the pieces the pages share inside it: a card's heading with its controls, a refusal's callout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import reflex as rx

from ventapp.pages.components.lang import t
from ventapp.pages.components.styles import CONTENT_MAX_WIDTH
from ventapp.state.auth_state import AuthState

PAGE_PADDING = ["1rem 0.75rem 3rem", "1.5rem 1rem 4rem"]
"""Around a page's content: phones first, then larger screens."""


def starting_notice() -> rx.Component:
    """``#server-starting``: the server is still starting, the login check waits for it."""
    return rx.cond(
        AuthState.starting,
        rx.callout(
            t("auth.starting"), icon="loader", color_scheme="amber", id="server-starting", width="100%"
        ),
    )


def refusal_callout(
    text: rx.Var[str] | str, id: str, size: str = "2", alert: bool = True, **props: Any
) -> rx.Component:
    """A refusal's sentence in a red callout with a warning icon (``.refusal-callout``).

    Every page words its refusals the same way (schedules, usage, login); the caller decides when
    it shows (``rx.cond``).

    Args:
        text: The sentence, already in the UI language (e.g. ``SchedulesState.problem``).
        id: The callout's DOM id, e.g. ``"usage-problem"``.
        size: ``"2"`` for a page's whole content refused, ``"1"`` inside a form or beside a list.
        alert: Screen readers say it as it shows (``role="alert"``); False for a check that follows
            each keystroke (the cron field's), which would interrupt the typing.
        **props: More props for ``rx.callout`` (e.g. ``class_name``).
    """
    return rx.callout(
        text,
        icon="triangle_alert",
        color_scheme="red",
        size=size,
        id=id,
        **({"role": "alert"} if alert else {}),
        **{**props, "class_name": " ".join(filter(None, ["refusal-callout", props.get("class_name")]))},
    )


def section_head(heading: rx.Component, *controls: rx.Component) -> rx.Component:
    """A card's heading with its controls at its right; where both do not fit on one line (a phone),
    the controls go to the next line, on the right, rather than squeeze the heading into broken lines.

    Args:
        heading: The card's ``rx.heading``.
        *controls: Buttons, a pager's label …, kept together, each on one line.
    """
    return rx.flex(
        heading,
        rx.hstack(*controls, spacing="2", align="center", white_space="nowrap", margin_left="auto"),
        align="center",
        wrap="wrap",
        column_gap="0.75rem",
        row_gap="0.25rem",
        width="100%",
    )


def page_frame(
    bar: rx.Component, *content: rx.Component, dialogs: Sequence[rx.Component] = (), on_mount: Any = None
) -> rx.Component:
    """A whole page: ``bar`` (``page_bar``), ``content`` centred in the reading column, then ``dialogs``.

    Args:
        bar: The page's top bar.
        *content: What the page shows, top to bottom.
        dialogs: Dialogs of the page (they open over it, outside the column).
        on_mount: The page's ``on_mount`` event(s), if any.
    """
    return rx.box(
        bar,
        rx.box(
            starting_notice(), *content, max_width=CONTENT_MAX_WIDTH, margin_x="auto", padding=PAGE_PADDING
        ),
        *dialogs,
        min_height="100dvh",
        background=rx.color("gray", 1),
        **({"on_mount": on_mount} if on_mount is not None else {}),
    )
