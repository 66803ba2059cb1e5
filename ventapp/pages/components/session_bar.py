"""The bar above the message box: attach a file, the files waiting for the next message, the mode switch.

DOM hooks: ``.attach-upload`` (holds the file ``input``) and ``#attach-button``;
``.attachment-chip`` with ``data-path``; ``.upload-error``; ``#mode-switch`` with
items ``full`` and ``plan``; ``.context-gauge`` with ``data-percent`` (context occupancy
after the last answer); ``#workspace-open`` (the session's files, :mod:`.workspace_panel`).
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from ventapp.pages.components.lang import t
from ventapp.pages.components.styles import CONTENT_MAX_WIDTH
from ventapp.pages.components.workspace_panel import workspace_panel
from ventapp.state.chat_state import ChatState
from ventapp.state.sessions_state import UPLOAD_ID, SessionsState


def _attachment_chip(path: rx.Var[str]) -> rx.Component:
    return rx.badge(
        rx.icon("paperclip", size=12),
        rx.text(
            path.split("/")[-1],
            style={"max_width": "14rem", "overflow": "hidden", "text_overflow": "ellipsis"},
        ),
        rx.el.button(
            rx.icon("x", size=12),
            type="button",
            on_click=SessionsState.remove_attachment(path),
            aria_label=t("attach.remove", name=path.split("/")[-1]),
            class_name="attachment-remove",
            style={"all": "unset", "cursor": "pointer", "display": "inline-flex"},
        ),
        variant="soft",
        radius="full",
        class_name="attachment-chip",
        data_path=path,
        title=path,
    )


def name_file_input(component: rx.Component, label: rx.Var[str]) -> rx.Component:
    """Give ``rx.upload``'s hidden file input a name (Reflex creates it without one; axe: ``label``)."""
    for child in getattr(component, "children", []):
        if type(child).__name__ == "Input" and str(getattr(child, "type", "")).strip('"') == "file":
            child.custom_attrs["aria-label"] = label
        else:
            name_file_input(child, label)
    return component


def refused_codes(rejections: rx.Var) -> rx.Var[list[str]]:
    """react-dropzone's ``fileRejections`` as their error codes (``file-too-large`` …).

    Only the codes go to the server: the rejected ``File`` objects would be sent over the websocket
    whole (a 25 MiB file as a socket.io attachment, the connection dropped).
    """
    return rx.Var(f"({rejections!s}).flatMap((r) => (r.errors || []).map((e) => e.code))").to(list[str])


def refuse_drop(rejections: rx.Var) -> Any:
    """An upload zone's ``on_drop_rejected``: :meth:`SessionsState.refuse_drop` with the codes."""
    return SessionsState.refuse_drop(refused_codes(rejections))


def attach_button() -> rx.Component:
    """Picks one file and saves it into the open session's ``/workspace/uploads/``."""
    return name_file_input(attach_upload(), t("attach.hint"))


def attach_upload() -> rx.Component:
    """The upload zone around the attach button."""
    return rx.upload.root(
        rx.button(
            rx.icon("paperclip", size=14),
            rx.text(t("attach.button"), display=["none", "inline"]),
            id="attach-button",
            type="button",
            variant="ghost",
            color_scheme="gray",
            size="1",
            disabled=ChatState.is_streaming,
            title=t("attach.hint"),
            aria_label=t("attach.button"),
        ),
        id=UPLOAD_ID,
        multiple=False,
        no_drag=True,
        no_keyboard=True,
        max_size=ChatState.upload_max_bytes,
        on_drop=[
            SessionsState.drop_started,
            SessionsState.handle_upload(rx.upload_files(upload_id=UPLOAD_ID)),
        ],
        on_drop_rejected=refuse_drop,
        class_name="attach-upload",
    )


def mode_switch() -> rx.Component:
    """``full`` runs at once; ``plan`` asks the agent to submit a plan for approval first."""
    return rx.segmented_control.root(
        rx.segmented_control.item(t("mode.full"), value="full"),
        rx.segmented_control.item(t("mode.plan"), value="plan"),
        value=ChatState.mode,
        on_change=SessionsState.set_mode,
        size="1",
        id="mode-switch",
        title=t("mode.hint"),
        aria_label=t("mode.label"),
    )


COMPACTION_PERCENT = 85
"""Summarisation starts at 85% of CONTEXT_LIMIT (README, "Pointing it at a model")."""


def context_gauge() -> rx.Component:
    """How full the session's context window is after the last answer (hidden until one reports it)."""
    percent = ChatState.context_percent
    return rx.cond(
        ChatState.context_label != "",
        rx.hstack(
            rx.icon("brain", size=13),
            rx.progress(
                value=percent,
                max=100,
                size="1",
                width="3.5rem",
                aria_label=ChatState.context_label,
                color_scheme=rx.cond(percent >= COMPACTION_PERCENT, "amber", "gray"),
            ),
            rx.text(t("context.short", percent=percent), size="1", white_space="nowrap"),
            align="center",
            spacing="1",
            color=rx.color("gray", 11),
            class_name="context-gauge",
            data_percent=percent,
            title=ChatState.context_label,
            aria_label=ChatState.context_label,
        ),
    )


def session_bar() -> rx.Component:
    """Attach button, waiting attachments, upload errors and the mode switch, in one row."""
    return rx.hstack(
        attach_button(),
        rx.foreach(ChatState.attachments, _attachment_chip),
        rx.cond(
            ChatState.upload_error != "",
            rx.text(
                ChatState.upload_error, size="1", color_scheme="red", class_name="upload-error", role="alert"
            ),
        ),
        rx.spacer(),
        context_gauge(),
        workspace_panel(),
        mode_switch(),
        align="center",
        spacing="2",
        wrap="wrap",
        width="100%",
        max_width=CONTENT_MAX_WIDTH,
        margin_x="auto",
        padding=["0 0.75rem", "0 1rem"],
        class_name="session-bar",
    )
