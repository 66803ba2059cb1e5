"""Transcript bubbles: the user's message, a finished answer, and the answer being streamed.

DOM hooks: ``.msg-user``; ``.msg-assistant`` with ``data-state`` = streaming | done |
error | waiting | stopped | dropped (the live one, streaming or waiting on its card, is also
``.msg-live``); ``.chat-error``; ``.stopped-note``; ``.citation-link``; ``.usage-footer``
(duration, tokens, cost); ``.msg-status`` (the status line); the card is ``.interrupt-card``;
``.msg-reasoning`` (a ``details``) holds the reasoning, ``.msg-reasoning-text``.
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars.base import VarData

from ventapp.pages.components.figure_alt import with_figure_alts
from ventapp.pages.components.interrupt_card import interrupt_card
from ventapp.pages.components.lang import t
from ventapp.pages.components.message_actions import answer_actions, edit_form, question_actions
from ventapp.pages.components.styles import markdown
from ventapp.pages.components.tool_card import tool_cards
from ventapp.state.chat_state import ChatState
from ventapp.state.live_text import REASONING, TEXT
from ventapp.state.views import ChatMessageView, CitationView, TodoView


def _sent_attachment(path: rx.Var[str]) -> rx.Component:
    """A file the message carried, as a chip (``.sent-attachment``)."""
    return rx.badge(
        rx.icon("paperclip", size=12),
        path.split("/")[-1],
        variant="soft",
        color_scheme="gray",
        radius="full",
        class_name="sent-attachment",
        data_path=path,
        title=path,
    )


def user_bubble(message: rx.Var[ChatMessageView]) -> rx.Component:
    """The user's message, right-aligned, plain text with line breaks kept; its edit form while edited."""
    bubble = rx.vstack(
        rx.box(
            rx.text(
                message.content, size="3", style={"white_space": "pre-wrap", "overflow_wrap": "anywhere"}
            ),
            class_name="msg-user",
            padding="0.6rem 1rem",
            border_radius="1.25rem",
            background=rx.color("accent", 4),
            color=rx.color("gray", 12),
            max_width=["90%", "80%", "75%"],
        ),
        rx.cond(
            message.attachments.length() > 0,
            rx.hstack(
                rx.foreach(message.attachments, _sent_attachment), spacing="1", wrap="wrap", justify="end"
            ),
        ),
        question_actions(message),
        align="end",
        spacing="1",
        width="100%",
        class_name=rx.cond(message.unsent, "user-row unsent", "user-row"),
    )
    return rx.flex(
        rx.cond(ChatState.editing_id == message.id, edit_form(message), bubble),
        justify="end",
        width="100%",
    )


def _todo_item(todo: rx.Var[TodoView]) -> rx.Component:
    icon = rx.match(
        todo.status,
        ("completed", rx.icon("circle_check", size=14, color=rx.color("green", 10))),
        ("in_progress", rx.icon("circle_dot", size=14, color=rx.color("accent", 10))),
        rx.icon("circle", size=14, color=rx.color("gray", 9)),
    )
    return rx.hstack(
        rx.box(icon, padding_top="3px", flex_shrink="0"),
        rx.text(
            todo.content,
            size="2",
            color=rx.cond(todo.status == "completed", rx.color("gray", 10), rx.color("gray", 12)),
            text_decoration=rx.cond(todo.status == "completed", "line-through", "none"),
        ),
        align="start",
        spacing="2",
        class_name="todo-item",
        data_status=todo.status,
    )


def todo_list(todos: rx.Var[list[TodoView]]) -> rx.Component:
    """The agent's plan (``write_todos``), when it has one."""
    return rx.cond(
        todos.length() > 0,
        rx.box(
            rx.hstack(
                rx.icon("list_todo", size=14),
                rx.text(t("todos.title"), size="1", weight="medium", color_scheme="gray"),
                spacing="1",
                align="center",
            ),
            rx.vstack(rx.foreach(todos, _todo_item), spacing="1", margin_top="0.35rem"),
            class_name="todo-list",
            padding="0.6rem 0.75rem",
            border_radius="var(--radius-3)",
            border=f"1px dashed {rx.color('gray', 6)}",
            width="100%",
        ),
    )


def _citation(citation: rx.Var[CitationView], index: rx.Var[int]) -> rx.Component:
    return rx.el.li(
        rx.hstack(
            rx.badge(index + 1, size="1", variant="soft", radius="full"),
            rx.box(
                rx.link(
                    citation.title,
                    href=citation.url,
                    is_external=True,
                    class_name="citation-link",
                    size="2",
                    weight="medium",
                ),
                rx.cond(
                    citation.snippet != "",
                    # Knowledge snippets are Markdown (tables, bold): rendered, never raw ``|`` and ``**``.
                    rx.box(
                        markdown(citation.snippet),
                        class_name="citation-snippet",
                        color=rx.color("gray", 11),
                        style={"font_size": "0.8rem", "max_height": "6.5em", "overflow": "hidden"},
                    ),
                ),
                min_width="0",
            ),
            align="start",
            spacing="2",
        ),
        list_style_type="none",
    )


def sources(citations: rx.Var[list[CitationView]], model_only: rx.Var[bool] | bool = False) -> rx.Component:
    """The "Sources" list under an answer; a quiet note when nothing tool-backed was used."""
    note = rx.cond(
        model_only,
        rx.text(
            rx.icon("sparkles", size=12, display="inline", margin_right="4px"),
            t("sources.none"),
            size="1",
            color_scheme="gray",
            class_name="model-only-note",
        ),
    )
    return rx.cond(
        citations.length() > 0,
        rx.box(
            rx.hstack(
                rx.icon("book_open", size=14),
                rx.text(t("sources.title"), size="1", weight="medium", color_scheme="gray"),
                spacing="1",
                align="center",
            ),
            rx.el.ol(
                rx.foreach(citations, _citation),
                style={"margin": "0.35rem 0 0 0", "padding": "0", "display": "grid", "gap": "0.4rem"},
            ),
            class_name="citations",
            padding_top="0.6rem",
            border_top=f"1px solid {rx.color('gray', 4)}",
            width="100%",
        ),
        note,
    )


def _reasoning(reasoning: rx.Var[str], streaming: rx.Var[bool] | bool = False) -> rx.Component:
    """The model's reasoning above the answer, collapsible; open while it streams (``streaming``).

    A paused answer waiting on its card is not streaming: collapsed, as it comes back after a reload.
    """
    return rx.cond(
        reasoning != "",
        rx.el.details(
            rx.el.summary(
                rx.text(t("reasoning.title"), size="1", color_scheme="gray", as_="span"), cursor="pointer"
            ),
            rx.text(
                reasoning,
                size="2",
                color_scheme="gray",
                style={"white_space": "pre-wrap"},
                class_name="msg-reasoning-text",
            ),
            class_name="msg-reasoning",
            open=streaming,
        ),
    )


def _avatar() -> rx.Component:
    return rx.flex(
        rx.icon("wind", size=16),
        align="center",
        justify="center",
        width="28px",
        height="28px",
        flex_shrink="0",
        background=rx.color("accent", 3),
        color=rx.color("accent", 11),
        border=f"1px solid {rx.color('accent', 6)}",
        style={"border_radius": "999px"},
    )


def status_line(status: rx.Var[str]) -> rx.Component:
    """The "正在思考…" / "正在执行…" line shown while the answer streams."""
    return rx.cond(
        status != "",
        rx.hstack(
            rx.spinner(size="1"),
            rx.text(status, size="2", color_scheme="gray"),
            align="center",
            spacing="2",
            class_name="msg-status",
        ),
    )


WAITING_FOR_YOU = t("tool.waiting")


def stopped_note() -> rx.Component:
    """The quiet line under an answer the person stopped (not an error)."""
    return rx.hstack(
        rx.icon("square", size=11, fill="currentColor"),
        rx.text(t("message.stopped"), size="1"),
        align="center",
        spacing="1",
        color=rx.color("gray", 10),
        class_name="stopped-note",
    )


def error_callout(
    error: rx.Var[str], detail: rx.Var[str], usage_link: rx.Var[bool] | None = None
) -> rx.Component:
    """A failed answer: the plain sentence, and the operator's detail behind a disclosure.

    ``usage_link``: the answer was refused for a quota the user lowered themselves; a link to
    ``/usage`` (``.quota-usage-link``), where they raise it again, follows the sentence (None: never).
    """
    link = (
        []
        if usage_link is None
        else [
            rx.cond(
                usage_link,
                rx.link(t("error.quota_open_usage"), href="/usage", class_name="quota-usage-link"),
            )
        ]
    )
    return rx.cond(
        error != "",
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle_alert")),
            rx.box(
                rx.callout.text(error),
                *link,
                rx.cond(
                    detail != "",
                    rx.el.details(
                        rx.el.summary(
                            t("error.details"), cursor="pointer", class_name="error-details-toggle"
                        ),
                        rx.text(
                            detail, size="1", class_name="error-detail", style={"white_space": "pre-wrap"}
                        ),
                        margin_top="0.25rem",
                    ),
                ),
            ),
            color_scheme="red",
            size="1",
            class_name="chat-error",
            role="alert",
        ),
    )


def _assistant_shell(*children: Any, state: Any, extra_class: str = "") -> rx.Component:
    return rx.hstack(
        _avatar(),
        rx.vstack(*children, spacing="3", width="100%", min_width="0"),
        class_name=f"msg-assistant {extra_class}".strip(),
        data_state=state,
        align="start",
        spacing="3",
        width="100%",
    )


def with_workspace_links(text: rx.Var[str]) -> rx.Var[str]:
    """The answer's Markdown with ``](/workspace/…)`` targets pointed at the session's files route.

    Models write figures as ``![…](/workspace/results/x.png)`` (the network skill asks for it);
    the browser can only fetch them from ``GET /api/sessions/{id}/files``, which checks the session is
    the caller's. Only what is shown changes: the stored answer keeps the agent's path. The
    solver's figures also get an alt text that says what they show (:func:`with_figure_alts`).
    """
    text = with_figure_alts(text)
    target = (
        "'](/api/sessions/' + encodeURIComponent("
        + str(ChatState.session_id)
        + ") + '/files?user_name=' + encodeURIComponent("
        + str(ChatState.user_name)
        + ") + '&path=/workspace/'"
    )
    # Built as one JS expression; the state vars' data (their hooks) must travel with it.
    var_data = VarData.merge(
        text._get_all_var_data(),
        ChatState.session_id._get_all_var_data(),
        ChatState.user_name._get_all_var_data(),
    )
    return rx.Var(f"String({text}).replaceAll('](/workspace/', {target})", _var_data=var_data).to(str)


def assistant_bubble(message: rx.Var[ChatMessageView], last: rx.Var[bool] | bool = False) -> rx.Component:
    """A finished answer: tool cards and plan first, then the text, sources, footer."""
    pending = rx.cond(message.status == "waiting", WAITING_FOR_YOU, t("tool.no_result"))
    return _assistant_shell(
        _reasoning(message.reasoning),
        tool_cards(message.tools, pending, message.content),
        todo_list(message.todos),
        rx.cond(message.content != "", rx.box(markdown(with_workspace_links(message.content)), width="100%")),
        rx.cond(
            message.notice != "",
            rx.callout(
                message.notice,
                icon="info",
                color_scheme=rx.cond(message.status == "dropped", "gray", "amber"),
                size="1",
                class_name="chat-notice",
            ),
        ),
        error_callout(message.error, message.error_detail, message.usage_link),
        rx.cond(message.status == "stopped", stopped_note()),
        sources(message.citations, message.model_only),
        rx.cond(
            message.footer != "",
            rx.text(message.footer, size="1", color_scheme="gray", class_name="usage-footer"),
        ),
        answer_actions(message, rx.Var.create(last)),
        state=message.status,
    )


def live_bubble() -> rx.Component:
    """The answer being streamed, fed by the ``live_*`` vars and the browser's buffers (never by ``messages``).

    A paused run's answer stays here with its card until the person answers; the resumed
    run then streams on in this same bubble.
    """
    pending = rx.cond(ChatState.is_streaming, "", WAITING_FOR_YOU)
    # The text and reasoning live in the browser and grow by small appends (issue 18): no state vars.
    live_text = TEXT.shown(ChatState.live_id)
    return _assistant_shell(
        _reasoning(REASONING.shown(ChatState.live_id), streaming=ChatState.is_streaming),
        tool_cards(ChatState.live_tools, pending, live_text),
        todo_list(ChatState.live_todos),
        rx.cond(live_text != "", rx.box(markdown(with_workspace_links(live_text)), width="100%")),
        rx.cond(
            ChatState.live_notice != "",
            rx.callout(
                ChatState.live_notice, icon="info", color_scheme="amber", size="1", class_name="chat-notice"
            ),
        ),
        interrupt_card(),
        status_line(ChatState.live_status),
        sources(ChatState.live_citations),
        state=rx.cond(ChatState.is_streaming, "streaming", "waiting"),
        extra_class="msg-live",
    )


def message_row(message: rx.Var[ChatMessageView], index: rx.Var[int]) -> rx.Component:
    """One transcript entry (``index`` in ``ChatState.messages``: the last answer gets regenerate)."""
    last = (index == ChatState.messages.length() - 1) & ~ChatState.live_open
    return rx.cond(message.role == "user", user_bubble(message), assistant_bubble(message, last))
