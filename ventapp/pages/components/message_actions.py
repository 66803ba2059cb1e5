"""The controls on sent messages: copy, regenerate and retry on an answer; edit (and retry) on a question.

DOM hooks: ``.copy-answer``, ``.regenerate``, ``.retry-answer`` (the last answer's row, ``.answer-actions``);
``.edit-message`` on a user bubble, whose edit form is ``.edit-form`` (``.edit-input``, ``.edit-send``,
``.edit-cancel``; the files it is sent with, ``.edit-attachment`` with ``.edit-attachment-remove``);
a refused message is ``.unsent`` with ``.unsent-badge`` and ``.retry-send``.
"""

from __future__ import annotations

import reflex as rx

from ventapp.agent.pipeline import MAX_MESSAGE_CHARS
from ventapp.pages.components.enter_sends import enter_sends
from ventapp.pages.components.lang import t
from ventapp.pages.components.length_notice import full_notice, shows_when_full
from ventapp.state.chat_data import EDIT_FORM_ID
from ventapp.state.chat_state import ChatState
from ventapp.state.views import ChatMessageView

EDIT_FULL_ID = "edit-full"
"""DOM id of the edit box's sentence at the length limit (the chat box's is ``composer-full``)."""


def _icon_button(icon: str, label: rx.Var[str], class_name: str, on_click: object) -> rx.Component:
    return rx.tooltip(
        rx.icon_button(
            rx.icon(icon, size=14),
            aria_label=label,
            class_name=class_name,
            on_click=on_click,
            variant="ghost",
            color_scheme="gray",
            size="1",
            type="button",
        ),
        content=label,
    )


def answer_actions(message: rx.Var[ChatMessageView], last: rx.Var[bool]) -> rx.Component:
    """Under an answer: copy it (Markdown); on the last one, regenerate, or retry a failed one.

    Retry only after an error sending again can help with (``retryable``: the model was unreachable or
    busy …); after ``model_error``, ``model_rejected``, ``quota`` … nothing changes until the settings
    or the message do, so the answer offers neither Retry nor regenerate (the question stays editable).
    """
    idle = ~ChatState.is_streaming
    return rx.hstack(
        rx.cond(
            message.content != "",
            _icon_button("copy", t("message.copy"), "copy-answer", rx.set_clipboard(message.content)),
        ),
        rx.cond(
            last & idle & (message.status != "waiting") & ((message.status != "error") | message.retryable),
            rx.cond(
                message.status == "error",
                rx.button(
                    rx.icon("rotate_ccw", size=14),
                    t("message.retry"),
                    class_name="retry-answer",
                    on_click=ChatState.retry,
                    size="1",
                    variant="soft",
                    type="button",
                ),
                _icon_button("refresh_cw", t("message.regenerate"), "regenerate", ChatState.regenerate),
            ),
        ),
        spacing="3",
        align="center",
        class_name="answer-actions",
    )


def _edit_attachment(path: rx.Var[str]) -> rx.Component:
    """A file the edited message will be sent with (``.edit-attachment``); its button leaves it out."""
    name = path.split("/")[-1]
    return rx.badge(
        rx.icon("paperclip", size=12),
        rx.text(name, style={"max_width": "14rem", "overflow": "hidden", "text_overflow": "ellipsis"}),
        rx.el.button(
            rx.icon("x", size=12),
            type="button",
            on_click=ChatState.remove_edit_attachment(path),
            aria_label=t("attach.remove", name=name),
            class_name="edit-attachment-remove",
            style={"all": "unset", "cursor": "pointer", "display": "inline-flex"},
        ),
        variant="soft",
        radius="full",
        class_name="edit-attachment",
        data_path=path,
        title=path,
    )


EDIT_MIN_ROWS = 3
EDIT_MAX_ROWS = 20
EDIT_INPUT_STYLE = {
    # The box grows with the text as it is typed or pasted (Chromium 123+, Safari 26+), from three
    # lines up to EDIT_MAX_ROWS lines (plus padding), then scrolls: a long message
    # opened in a fixed 3-row box showed three of its lines at a time (F11).
    "& textarea": {
        "field_sizing": "content",
        "min_height": f"calc({EDIT_MIN_ROWS}lh + 2 * var(--text-area-padding-y))",
        "max_height": f"calc({EDIT_MAX_ROWS}lh + 2 * var(--text-area-padding-y))",
        "overflow_y": "auto",
    },
}
"""Style of ``.edit-input`` (a Radix TextArea: the class sits on its wrapper, the box is its ``textarea``)."""


def _edit_rows(text: rx.Var[str]) -> rx.Var[str]:
    """Rows for ``text``: one per line, from EDIT_MIN_ROWS to EDIT_MAX_ROWS (wrapped lines not counted)."""
    lines = text.split("\n").length()
    rows = rx.cond(lines < EDIT_MIN_ROWS, EDIT_MIN_ROWS, rx.cond(lines > EDIT_MAX_ROWS, EDIT_MAX_ROWS, lines))
    return rows.to_string()


def edit_form(message: rx.Var[ChatMessageView]) -> rx.Component:
    """A sent message opened for editing: sending it replaces that turn and everything after it.

    The files it carried are shown as chips (``.edit-attachment``): they go with the edited message
    unless removed.
    """
    text = rx.cond(ChatState.edit_draft != "", ChatState.edit_draft, message.content)
    return rx.form(
        rx.vstack(
            rx.text_area(
                name="edited",
                default_value=text,
                class_name="edit-input",
                aria_label=t("message.edit_label"),
                auto_focus=True,
                max_length=MAX_MESSAGE_CHARS,  # as in the chat box, and says so (try20)
                custom_attrs={
                    "on_key_down": enter_sends(".edit-send"),
                    "on_change": shows_when_full(EDIT_FULL_ID),
                },
                width="100%",
                # Browsers without ``field-sizing`` (Firefox) open it with a row per line of the text.
                rows=_edit_rows(text),
                style=EDIT_INPUT_STYLE,
            ),
            full_notice(EDIT_FULL_ID),
            rx.cond(
                ChatState.edit_attachments.length() > 0,
                rx.hstack(rx.foreach(ChatState.edit_attachments, _edit_attachment), spacing="1", wrap="wrap"),
            ),
            rx.hstack(
                rx.button(
                    t("common.cancel"),
                    class_name="edit-cancel",
                    type="button",
                    variant="soft",
                    color_scheme="gray",
                    size="1",
                    on_click=ChatState.cancel_edit,
                ),
                rx.button(t("message.edit_send"), class_name="edit-send", type="submit", size="1"),
                justify="end",
                width="100%",
            ),
            spacing="2",
            width="100%",
        ),
        on_submit=ChatState.send_edit,
        id=EDIT_FORM_ID,
        class_name="edit-form",
        width=["90%", "80%", "75%"],
    )


def question_actions(message: rx.Var[ChatMessageView]) -> rx.Component:
    """Under a question: edit and resend; a refused one says it was not sent, with Retry."""
    return rx.cond(
        message.unsent,
        rx.hstack(
            rx.badge(t("message.unsent"), color_scheme="amber", variant="soft", class_name="unsent-badge"),
            rx.button(
                rx.icon("rotate_ccw", size=14),
                t("message.retry"),
                class_name="retry-send",
                on_click=ChatState.retry,
                size="1",
                variant="soft",
                type="button",
                disabled=ChatState.is_streaming,
            ),
            spacing="2",
            align="center",
        ),
        rx.cond(
            ~ChatState.is_streaming,
            _icon_button("pencil", t("message.edit"), "edit-message", ChatState.start_edit(message.id)),
        ),
    )
