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


def connection_notice() -> rx.Component:
    """A red notice at the top of the page while the socket to the server is lost."""
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
            position="fixed",
            top="0.75rem",
            left="50%",
            transform="translateX(-50%)",
            z_index="9999",
            max_width="min(36rem, calc(100vw - 1.5rem))",
            box_shadow="var(--shadow-4)",
        ),
    )


def overlay_wrap(stateful: bool) -> rx.Component | None:
    """The app wrap that stands in for Reflex's overlay: only pages with state have a socket."""
    return connection_notice() if stateful else None
