"""An alert dialog that asks before something is deleted: a title, a sentence naming what goes,
Cancel and a red confirm button. The sidebar's conversation delete and the schedules page's
schedule delete share it, so both ask the same way (Escape and Cancel keep everything)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from ventapp.pages.components.lang import t


def confirm_dialog(
    *,
    title: rx.Var[str],
    body: rx.Var[str],
    confirm: rx.Var[str],
    is_open: rx.Var[bool],
    on_open_change: Any,
    on_cancel: Any,
    on_confirm: Any,
    cancel_id: str,
    confirm_id: str,
    **props: Any,
) -> rx.Component:
    """``rx.alert_dialog`` asking before a deletion; it is open while ``is_open`` is true.

    Args:
        title: The question, already in the UI language (``t(...)``).
        body: What is deleted and what stays, naming the item (``t(..., name=State.var)``).
        confirm: The red button's words (e.g. "Delete", or "Stop and delete").
        is_open: A state var: the dialog shows while it is true.
        on_open_change: Event handler taking ``bool``; Escape calls it with ``False`` (nothing deleted).
        on_cancel: The Cancel button's event (nothing deleted).
        on_confirm: The red button's event (deletes).
        cancel_id: DOM id of the Cancel button (e.g. ``"delete-cancel"``).
        confirm_id: DOM id of the red button (e.g. ``"delete-confirm"``).
        **props: More props for ``rx.alert_dialog.content`` (e.g. ``id``).
    """
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title(title),
            rx.alert_dialog.description(body, size="2"),
            rx.hstack(
                # The focus opens on Cancel, so Enter or Space at once keeps everything. Radix's alert
                # dialog focuses only its own Cancel part, which Reflex wraps in a div it cannot
                # focus: without this the focus stayed on the trash button behind the dialog.
                rx.button(
                    t("common.cancel"),
                    variant="soft",
                    color_scheme="gray",
                    id=cancel_id,
                    on_click=on_cancel,
                    auto_focus=True,
                ),
                rx.button(confirm, color_scheme="red", id=confirm_id, on_click=on_confirm),
                justify="end",
                spacing="3",
                margin_top="1rem",
            ),
            max_width="26rem",
            **props,
        ),
        open=is_open,
        on_open_change=on_open_change,
    )
