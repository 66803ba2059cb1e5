"""A tool call as a card: label, tool name, arguments (collapsible), result or error.

DOM hooks: ``.tool-card`` with ``id="tool-<tool_call_id>"``, ``data-tool-call-id``,
``data-review`` (approved | edited | rejected | sent_back | dropped | "") and ``data-state`` (running |
done | error | pending | rejected | dropped); the result is ``.tool-result`` inside the collapsed
``.tool-result-box`` (its one line ``.tool-summary``); an edit shows ``.tool-args-old`` → ``.tool-args``.
A sub-agent's card is also ``.subagent-card`` (``.tool-label``, ``.subagent-description``) with its
own calls' cards inside ``.subagent-steps``; an answered plan is ``.answered-plan``. A figure the
result lists is ``img.tool-figure``, unless the answer embeds it (then it shows there, once).
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import VarData

from ventapp.pages.components.figure_alt import figure_alt
from ventapp.pages.components.lang import t
from ventapp.pages.components.styles import PRE_STYLE, markdown
from ventapp.state.chat_state import ChatState
from ventapp.state.views import TODO_TOOL, ToolCardView

Label = rx.Var[str] | str


def _state_badge(card: rx.Var[ToolCardView], pending: Label) -> rx.Component:
    return rx.match(
        card.review,
        (
            "rejected",
            rx.badge(rx.icon("ban", size=12), t("tool.rejected_by_you"), color_scheme="gray", variant="soft"),
        ),
        (
            "dropped",
            rx.badge(
                rx.icon("circle_slash", size=12), t("tool.dropped"), color_scheme="gray", variant="soft"
            ),
        ),
        rx.cond(
            card.done,
            rx.cond(
                card.error,
                rx.badge(rx.icon("circle_x", size=12), t("tool.failed"), color_scheme="red", variant="soft"),
                rx.badge(
                    rx.icon("circle_check", size=12), t("tool.done"), color_scheme="green", variant="soft"
                ),
            ),
            rx.cond(
                pending == "",
                rx.badge(rx.spinner(size="1"), t("tool.running"), color_scheme="gray", variant="soft"),
                rx.badge(rx.icon("circle_pause", size=12), pending, color_scheme="amber", variant="soft"),
            ),
        ),
    )


def _review_badge(card: rx.Var[ToolCardView]) -> rx.Component:
    """What the person decided on the approval card (a rejection is the state badge itself)."""
    return rx.match(
        card.review,
        (
            "edited",
            rx.badge(
                rx.icon("pencil", size=12), t("tool.edited_by_you"), color_scheme="blue", variant="outline"
            ),
        ),
        (
            "approved",
            rx.badge(
                rx.icon("user_check", size=12),
                t("tool.approved_by_you"),
                color_scheme="gray",
                variant="outline",
            ),
        ),
        rx.fragment(),
    )


def _pre(text: rx.Var[str], class_name: str, **style: Any) -> rx.Component:
    # It scrolls: keyboard users must reach it (axe: scrollable-region-focusable).
    return rx.el.pre(text, class_name=class_name, tab_index=0, style={**PRE_STYLE, **style})


def _arguments(card: rx.Var[ToolCardView]) -> rx.Component:
    """The arguments behind a disclosure; an edited call shows the proposal → what ran."""
    summary = rx.el.summary(
        rx.text(t("tool.arguments"), size="1", color_scheme="gray", as_="span"),
        cursor="pointer",
        style={"user_select": "none"},
    )
    edited = rx.vstack(
        rx.text(t("tool.proposed_args"), size="1", color_scheme="gray"),
        _pre(card.old_args_json, "tool-args-old", text_decoration="line-through", opacity="0.75"),
        rx.text("↓ " + t("tool.edited_args"), size="1", color_scheme="gray"),
        _pre(card.args_json, "tool-args"),
        spacing="1",
        width="100%",
        margin_top="0.35rem",
    )
    return rx.el.details(
        summary,
        rx.cond(card.old_args_json != "", edited, _pre(card.args_json, "tool-args", margin_top="0.35rem")),
        margin_top="0.35rem",
        open=card.old_args_json != "",
    )


def _result(card: rx.Var[ToolCardView]) -> rx.Component:
    """The result, collapsed under a one-line summary."""
    return rx.cond(
        card.done,
        rx.el.details(
            rx.el.summary(
                rx.text(t("tool.result_label"), size="1", weight="medium", color_scheme="gray", as_="span"),
                rx.text(card.summary, size="1", color_scheme="gray", as_="span", class_name="tool-summary"),
                cursor="pointer",
                style={"user_select": "none", "overflow_wrap": "anywhere"},
            ),
            _pre(
                card.content,
                "tool-result",
                margin_top="0.35rem",
                border_color=rx.cond(
                    card.error & (card.review != "rejected"), rx.color("red", 7), rx.color("gray", 5)
                ),
                color=rx.cond(card.error & (card.review != "rejected"), rx.color("red", 11), "inherit"),
            ),
            class_name="tool-result-box",
            data_error=rx.cond(card.error, "true", "false"),
            margin_top="0.35rem",
        ),
    )


def _plan(card: rx.Var[ToolCardView]) -> rx.Component:
    """A plan card's plan, kept in the answer after it was approved or sent back."""
    return rx.cond(
        (card.plan != "") & card.done,  # while it waits, the plan card itself shows the plan
        rx.box(
            rx.match(
                card.review,
                ("approved", rx.text(t("plan.approved"), size="1", weight="medium", color_scheme="green")),
                ("sent_back", rx.text(t("plan.sent_back"), size="1", weight="medium", color_scheme="amber")),
                rx.fragment(),
            ),
            markdown(card.plan),
            class_name="answered-plan",
            data_review=card.review,
            margin_top="0.5rem",
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
            src=src,
            alt=figure_alt(path),
            class_name="tool-figure",
            width="100%",
            max_width="720px",
            loading="lazy",
        ),
        href=src,
        target="_blank",
    )


# True when the answer's Markdown embeds figure `p` as an image: `![…](p)` or `![…](p "title")`.
_EMBEDS = (
    r"((p) => new RegExp('!\\[[^\\]]*\\]\\(' + p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')"
    r" + '(\\)|\\s)').test(String(TEXT ?? '')))"
)


def shown_figures(figures: rx.Var[list[str]], text: rx.Var[str] | None) -> rx.Var[list[str]]:
    """The card's figures less those the answer's text embeds as Markdown images.

    The network skill asks the model to show its figure in the answer (``![…](/workspace/…)``),
    where it reads with its explanation: the card then leaves it out, so the figure shows once.
    A figure the answer does not embed stays in the card, so none is lost. Worked out in the
    browser from the same text the bubble renders (the live buffer while streaming, the stored
    answer after a reload), so both agree.
    """
    if text is None:
        return figures
    embeds = _EMBEDS.replace("TEXT", str(text))
    var_data = VarData.merge(figures._get_all_var_data(), text._get_all_var_data())
    return rx.Var(f"({figures}).filter((p) => !{embeds}(p))", _var_data=var_data).to(list[str])


def _figures(card: rx.Var[ToolCardView], text: rx.Var[str] | None) -> rx.Component:
    figures = shown_figures(card.figures, text)
    return rx.cond(
        figures.length() > 0,  # type: ignore[attr-defined]
        rx.vstack(rx.foreach(figures, _figure), spacing="2", margin_top="0.5rem", width="100%"),
    )


def _subagent_steps(
    card: rx.Var[ToolCardView], pending: Label, cards: rx.Var[list[ToolCardView]], text: rx.Var[str] | None
) -> rx.Component:
    """A sub-agent's own tool cards inside its card: open while it works, collapsed once done."""
    return rx.el.details(
        rx.el.summary(
            rx.text(t("subagent.steps"), size="1", color_scheme="gray", as_="span"),
            cursor="pointer",
            style={"user_select": "none"},
        ),
        rx.vstack(
            rx.foreach(
                cards,
                lambda child: rx.cond(
                    child.parent == card.tool_call_id, tool_card(child, pending, text=text)
                ),
            ),
            spacing="2",
            width="100%",
            margin_top="0.35rem",
            padding_left="0.75rem",
            border_left=f"2px solid {rx.color('accent', 5)}",
        ),
        class_name="subagent-steps",
        open=~card.done,
        margin_top="0.35rem",
    )


def tool_card(
    card: rx.Var[ToolCardView],
    pending: Label = "",
    cards: rx.Var[list[ToolCardView]] | None = None,
    text: rx.Var[str] | None = None,
) -> rx.Component:
    """One card per ``tool_call_id``: the same tool called twice gives two cards.

    Args:
        card: The call.
        pending: Badge text for a call without a result that is not running (e.g.
            "Waiting for you" while the run is paused); ``""`` shows "Running".
        cards: The answer's cards, for a sub-agent (``task``) card to nest the calls its
            sub-agent made (``parent``); None for a nested card.
        text: The answer's Markdown: figures it embeds are left out of the card (:func:`shown_figures`).
    """
    pending = rx.Var.create(pending)
    is_task = card.tool == "task"
    failed = card.error & (card.review != "rejected")
    return rx.box(
        rx.hstack(
            rx.cond(
                is_task,
                rx.icon("bot", size=14, color=rx.color("accent", 10)),
                rx.icon("wrench", size=14, color=rx.color("accent", 10)),
            ),
            rx.text(card.cn_tool, weight="medium", size="2", class_name="tool-label"),
            rx.cond(
                is_task,
                rx.text(card.description, size="2", color_scheme="gray", class_name="subagent-description"),
                rx.code(card.tool, size="1", variant="ghost", color_scheme="gray"),
            ),
            rx.spacer(),
            _review_badge(card),
            _state_badge(card, pending),
            align="center",
            spacing="2",
            width="100%",
            wrap="wrap",
        ),
        _arguments(card),
        _plan(card),
        rx.box(_result(card)),
        _figures(card, text),
        *([rx.cond(is_task, _subagent_steps(card, pending, cards, text))] if cards is not None else []),
        class_name=rx.cond(is_task, "tool-card subagent-card", "tool-card"),
        id=f"tool-{card.tool_call_id}",
        data_tool_call_id=card.tool_call_id,
        data_review=card.review,
        data_state=rx.match(
            card.review,
            ("rejected", "rejected"),
            ("dropped", "dropped"),
            rx.cond(
                card.done, rx.cond(card.error, "error", "done"), rx.cond(pending == "", "running", "pending")
            ),
        ),
        padding="0.6rem 0.75rem",
        border_radius="var(--radius-3)",
        border=rx.cond(failed, f"1px solid {rx.color('red', 7)}", f"1px solid {rx.color('gray', 5)}"),
        background=rx.cond(failed, rx.color("red", 2), rx.color("gray", 1)),
        width="100%",
    )


def shown_at_top(card: rx.Var[ToolCardView]) -> rx.Var[bool]:
    """A card shown in the answer's row of cards: a top-level call, except a ``write_todos`` that
    took effect (the todo panel shows it). A refused one (several in one step) is a card saying so:
    otherwise the person saw no sign of it (tester)."""
    return (card.parent == "") & ((card.tool != TODO_TOOL) | card.error)


def tool_cards(
    cards: rx.Var[list[ToolCardView]], pending: Label = "", text: rx.Var[str] | None = None
) -> rx.Component:
    """An answer's cards: top-level calls, each sub-agent's calls inside its card (:func:`shown_at_top`).

    ``text``: the answer's Markdown (its embedded figures leave the cards)."""
    return rx.cond(
        cards.length() > 0,
        rx.vstack(
            rx.foreach(
                cards,
                lambda card: rx.cond(shown_at_top(card), tool_card(card, pending, cards, text)),
            ),
            spacing="2",
            width="100%",
        ),
    )
