"""The notice a page shows while its event socket is down, in the UI language.

It replaces Reflex's own overlay (app wrap ``(5, "Overlay")``: a pulsing Wi-Fi icon and the toast
"Cannot connect to server: websocket error. Check if server is reachable at …", English only and
naming the socket's URL). Reflex keeps trying to reconnect by itself; the notice goes once it has.

DOM hooks: ``#connection-lost``.
"""

from __future__ import annotations

import reflex as rx
from reflex.components.core.banner import has_connection_errors

from ventapp.pages.components.lang import t
from ventapp.pages.components.styles import HEADER_HEIGHT


def connection_notice() -> rx.Component:
    """A red notice just below the page's top bar while the socket to the server is lost."""
    return rx.cond(
        has_connection_errors,
        rx.callout.root(
            rx.callout.icon(rx.icon("wifi_off")),
            rx.callout.text(t("connection.lost")),
            id="connection-lost",
            role="alert",
            color_scheme="red",
            variant="surface",
            size="1",
            # Below the top bar, never over it (at the top it hid the model's name and the header's
            # buttons); opaque, so the page scrolling under it does not show through its text.
            position="fixed",
            top=f"calc({HEADER_HEIGHT} + 0.5rem)",
            background=rx.color("red", 3),
            # Centred by its margins: with left 50% and a shift back it could only be half the screen
            # wide, three lines on a phone.
            left="0.75rem",
            right="0.75rem",
            margin_x="auto",
            width="fit-content",
            max_width="36rem",
            z_index="9999",
            box_shadow="var(--shadow-4)",
        ),
    )


def overlay_wrap(stateful: bool) -> rx.Component | None:
    """The app wrap that stands in for Reflex's overlay: only pages with state have a socket."""
    return connection_notice() if stateful else None
