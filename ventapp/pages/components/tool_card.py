"""A tool call as a card: label, tool name, arguments (collapsible), result or error.

DOM hooks: ``.tool-card`` with ``id="tool-<tool_call_id>"``, ``data-tool-call-id``
and ``data-state`` (running | done | error | pending); the result is ``.tool-result``.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.lang import t
from ventapp.pages.components.styles import PRE_STYLE
from ventapp.state.chat_state import ChatState
from ventapp.state.views import ToolCardView

Label = rx.Var[str] | str


def _state_badge(card: rx.Var[ToolCardView], pending: Label) -> rx.Component:
    return rx.cond(
        card.done,
        rx.cond(
            card.error,
            rx.badge(rx.icon("circle_x", size=12), t("tool.failed"), color_scheme="red", variant="soft"),
            rx.badge(rx.icon("circle_check", size=12), t("tool.done"), color_scheme="green", variant="soft"),
        ),
        rx.cond(
            pending == "",
            rx.badge(rx.spinner(size="1"), t("tool.running"), color_scheme="gray", variant="soft"),
            rx.badge(rx.icon("circle_pause", size=12), pending, color_scheme="amber", variant="soft"),
        ),
    )


def _result(card: rx.Var[ToolCardView]) -> rx.Component:
    return rx.cond(
        card.done,
        rx.el.pre(
            card.content,
            class_name="tool-result",
            tab_index=0,  # it scrolls: keyboard users must reach it (axe: scrollable-region-focusable)
            data_error=rx.cond(card.error, "true", "false"),
            style={
                **PRE_STYLE,
                "border_color": rx.cond(card.error, rx.color("red", 7), rx.color("gray", 5)),
                "color": rx.cond(card.error, rx.color("red", 11), "inherit"),
            },
        ),
    )


def _uri_component(value: rx.Var) -> rx.Var[str]:
    return rx.Var(f"encodeURIComponent({value})").to(str)


def _figure(path: rx.Var[str]) -> rx.Component:
    # Served by GET /api/sessions/{id}/files, which checks that the session is the caller's.
    src = (
        "/api/sessions/"
        + ChatState.session_id
        + "/files?path="
        + _uri_component(path)
        + "&user_name="
        + _uri_component(ChatState.user_name)
    )
    return rx.el.a(
        rx.image(
            src=src, alt=path, class_name="tool-figure", width="100%", max_width="720px", loading="lazy"
        ),
        href=src,
        target="_blank",
    )


def _figures(card: rx.Var[ToolCardView]) -> rx.Component:
    return rx.cond(
        card.figures.length() > 0,  # type: ignore[attr-defined]
        rx.vstack(rx.foreach(card.figures, _figure), spacing="2", margin_top="0.5rem", width="100%"),
    )


def tool_card(card: rx.Var[ToolCardView], pending: Label = "") -> rx.Component:
    """One card per ``tool_call_id``: the same tool called twice gives two cards.

    Args:
        card: The call.
        pending: Badge text for a call without a result that is not running (e.g.
            "Waiting for you" while the run is paused); ``""`` shows "Running".
    """
    pending = rx.Var.create(pending)
    return rx.box(
        rx.hstack(
            rx.icon("wrench", size=14, color=rx.color("accent", 10)),
            rx.text(card.cn_tool, weight="medium", size="2"),
            rx.code(card.tool, size="1", variant="ghost", color_scheme="gray"),
            rx.cond(
                card.agent_id != "main",
                rx.badge(card.agent_id, size="1", variant="outline", color_scheme="gray"),
            ),
            rx.spacer(),
            _state_badge(card, pending),
            align="center",
            spacing="2",
            width="100%",
        ),
        rx.el.details(
            rx.el.summary(
                rx.text(t("tool.arguments"), size="1", color_scheme="gray", as_="span"),
                cursor="pointer",
                style={"user_select": "none"},
            ),
            rx.el.pre(
                card.args_json,
                class_name="tool-args",
                tab_index=0,
                style={**PRE_STYLE, "margin_top": "0.35rem"},
            ),
            margin_top="0.35rem",
        ),
        rx.box(_result(card), margin_top="0.35rem"),
        _figures(card),
        class_name="tool-card",
        id=f"tool-{card.tool_call_id}",
        data_tool_call_id=card.tool_call_id,
        data_state=rx.cond(
            card.done, rx.cond(card.error, "error", "done"), rx.cond(pending == "", "running", "pending")
        ),
        padding="0.6rem 0.75rem",
        border_radius="var(--radius-3)",
        border=rx.cond(
            card.error,
            f"1px solid {rx.color('red', 7)}",
            f"1px solid {rx.color('gray', 5)}",
        ),
        background=rx.cond(card.error, rx.color("red", 2), rx.color("gray", 1)),
        width="100%",
    )
