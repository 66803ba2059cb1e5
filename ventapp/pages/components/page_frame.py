"""The frame every page but the chat shares: its top bar, then its content in the reading column."""

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
