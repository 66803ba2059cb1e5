"""The card a paused run shows inside its answer bubble: approve tool calls, answer questions, approve a plan.

DOM hooks: ``.interrupt-card`` with ``data-kind`` (tool_approval | ask_user | plan) and
``data-submitting``; ``.interrupt-error`` (the card's problem, e.g. a refused resume).
Tool approval: ``.approval-call`` per call (``data-index``, ``data-mode``), toggles
``.edit-call`` and ``.reject-call``, inputs ``.edit-args`` (``args_<i>``) and
``.reject-reason`` (``reason_<i>``), ``.remember-scope`` (``remember_<i>``: ``""`` | ``session`` |
``always``, an approved call of a tool that may be remembered), ``.call-error``, and ``#reject-all`` (a batch), ``#approve-all`` (sends one
decision per call). Questions: ``.ask-answer`` (``answer_<i>``) and ``#submit-answers``.
Plan: ``#approve-plan``, ``#plan-feedback`` and ``#send-plan-feedback``.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.lang import t
from ventapp.pages.components.styles import PRE_STYLE, markdown
from ventapp.state.chat_state import ChatState
from ventapp.state.interrupt_view import ApprovalCallView

CARD = ChatState.interrupt
BUSY = CARD.submitting

FIELD_STYLE = {
    "width": "100%",
    "font_size": "0.875rem",
    "line_height": "1.5",
    "padding": "0.35rem 0.6rem",
    "border_radius": "var(--radius-2)",
    "border": f"1px solid {rx.color('gray', 7)}",
    "background": rx.color("gray", 1),
    "color": rx.color("gray", 12),
    "outline": "none",
    "_focus": {"border_color": rx.color("accent", 8), "box_shadow": f"0 0 0 1px {rx.color('accent', 8)}"},
    "_disabled": {"opacity": "0.6"},
}
"""Plain ``input``/``textarea`` styled like the theme's fields: the hook class sits on the field itself."""


def _heading(icon: str, title: rx.Var[str] | str, hint: rx.Var[str] | str) -> rx.Component:
    return rx.hstack(
        rx.icon(icon, size=16, color=rx.color("amber", 11), flex_shrink="0", margin_top="2px"),
        rx.vstack(
            rx.text(title, size="2", weight="bold"),
            rx.text(hint, size="1", color_scheme="gray"),
            spacing="0",
        ),
        align="start",
        spacing="2",
    )


def _card_error() -> rx.Component:
    return rx.cond(
        CARD.error != "",
        rx.text(
            rx.icon("triangle_alert", size=12, display="inline", margin_right="4px"),
            CARD.error,
            size="2",
            color_scheme="red",
            class_name="interrupt-error",
            role="alert",
        ),
    )


def _toggle(
    call: rx.Var[ApprovalCallView], mode: str, label: rx.Var[str], undo: rx.Var[str], css: str
) -> rx.Component:
    active = call.mode == mode
    # "Reject…" is red; once chosen, its undo is neutral: the red action is then the submit
    # button's (tester #10, 2 Dec: a red "undo" beside a green "reject" read the wrong way round).
    return rx.button(
        rx.cond(active, undo, label),
        type="button",
        size="1",
        variant="soft" if mode == "reject" else rx.cond(active, "solid", "soft"),
        color_scheme=rx.cond(active, "gray", "red") if mode == "reject" else "gray",
        class_name=css,
        disabled=BUSY,
        on_click=ChatState.toggle_call(call.index, mode),
    )


def _remember_choice(call: rx.Var[ApprovalCallView]) -> rx.Component:
    """ "Don't ask again" with this approval (the API's ``remember``), beside the call it applies to:
    only while the call is approved and its tool may be remembered (an edit or reject asks again)."""
    option_style = {"background": rx.color("gray", 1), "color": rx.color("gray", 12)}
    return rx.cond(
        (call.mode == "approve") & call.rememberable,
        rx.hstack(
            rx.icon("bell_off", size=12, color=rx.color("gray", 10)),
            rx.el.label(t("approval.remember_label"), html_for=f"remember-{call.index}", font_size="0.75rem"),
            rx.el.select(
                rx.el.option(t("approval.remember_once"), value="", style=option_style),
                rx.el.option(t("approval.remember_session"), value="session", style=option_style),
                rx.el.option(t("approval.remember_always"), value="always", style=option_style),
                id=f"remember-{call.index}",
                name=f"remember_{call.index}",
                default_value=call.remember,
                class_name="remember-scope",
                title=t("approval.remember_hint"),
                disabled=BUSY,
                style={**FIELD_STYLE, "width": "auto", "font_size": "0.75rem", "padding": "0.15rem 0.4rem"},
            ),
            align="center",
            justify="end",
            spacing="2",
            width="100%",
            margin_top="0.4rem",
            color=rx.color("gray", 11),
        ),
    )


def _approval_call(call: rx.Var[ApprovalCallView]) -> rx.Component:
    editing = call.mode == "edit"
    return rx.box(
        rx.hstack(
            rx.icon("wrench", size=14, color=rx.color("accent", 10)),
            # The catalogue's name leads; the raw name stays, small, for whoever reads logs.
            rx.text(call.label, size="2", weight="medium", class_name="approval-tool", title=call.tool),
            rx.code(
                call.tool, size="1", variant="ghost", color_scheme="gray", class_name="approval-tool-name"
            ),
            rx.spacer(),
            _toggle(call, "edit", t("approval.edit"), t("approval.cancel_edit"), "edit-call"),
            _toggle(call, "reject", t("approval.reject"), t("approval.undo_reject"), "reject-call"),
            align="center",
            spacing="2",
            wrap="wrap",
            width="100%",
        ),
        rx.cond(
            call.reason != "",
            rx.text(
                call.reason, size="1", color_scheme="gray", margin_top="0.25rem", class_name="approval-reason"
            ),
        ),
        rx.cond(
            editing,
            rx.el.textarea(
                default_value=call.edit_text,
                name=f"args_{call.index}",
                class_name="edit-args",
                aria_label=t("approval.args_label"),
                rows=5,
                spell_check=False,
                disabled=BUSY,
                style={
                    **FIELD_STYLE,
                    "font_family": PRE_STYLE["font_family"],
                    "font_size": "0.8rem",
                    "margin_top": "0.4rem",
                    "resize": "vertical",
                },
            ),
            rx.el.pre(
                call.args_json, class_name="approval-args", style={**PRE_STYLE, "margin_top": "0.4rem"}
            ),
        ),
        rx.cond(
            call.error != "",
            rx.text(call.error, size="1", color_scheme="red", class_name="call-error", role="alert"),
        ),
        rx.cond(
            call.mode == "reject",
            rx.el.input(
                default_value=call.reject_reason,
                name=f"reason_{call.index}",
                placeholder=t("approval.reason_placeholder"),
                class_name="reject-reason",
                aria_label=t("approval.reason_label"),
                disabled=BUSY,
                style={**FIELD_STYLE, "margin_top": "0.4rem"},
            ),
        ),
        _remember_choice(call),
        class_name="approval-call",
        data_index=call.index,
        data_mode=call.mode,
        padding="0.5rem 0.6rem",
        border_radius="var(--radius-2)",
        border=f"1px solid {rx.color('gray', 5)}",
        background=rx.color("gray", 1),
        width="100%",
    )


def _submit_row(
    icon: str | rx.Component,
    label: str | rx.Var[str],
    element_id: str,
    *before: rx.Component,
    color_scheme: str | rx.Var[str] = "teal",
) -> rx.Component:
    """The card's right-aligned submit button (after ``before``), busy while the answer is being sent;
    ``color_scheme``: the theme's teal, or red when what it sends is destructive."""
    return rx.hstack(
        *before,
        rx.button(
            rx.icon(icon, size=14) if isinstance(icon, str) else icon,
            label,
            id=element_id,
            type="submit",
            size="2",
            loading=BUSY,
            disabled=BUSY,
            color_scheme=color_scheme,
        ),
        justify="end",
        width="100%",
    )


def _decision_icon() -> rx.Component:
    """What the button sends: ✓ to approve, ⃠ when every call is rejected, a paper plane for a mix."""
    return rx.match(
        CARD.submit_icon,
        ("ban", rx.icon("ban", size=14, class_name="submit-icon-ban")),
        ("send", rx.icon("send", size=14, class_name="submit-icon-send")),
        rx.icon("check", size=14, class_name="submit-icon-check"),
    )


def _reject_all() -> rx.Component:
    """ "Reject all", for a batch of two or more calls."""
    return rx.cond(
        CARD.calls.length() > 1,
        rx.button(
            rx.icon("ban", size=14),
            t("approval.reject_all"),
            id="reject-all",
            type="button",
            size="2",
            variant="soft",
            color_scheme="gray",
            disabled=BUSY,
            on_click=ChatState.reject_all_calls,
        ),
    )


def _tool_approval() -> rx.Component:
    return rx.form(
        rx.vstack(
            _heading(
                "shield_alert",
                rx.cond(CARD.calls.length() > 1, t("approval.title_many"), t("approval.title_one")),
                t("approval.hint"),
            ),
            rx.foreach(CARD.calls, _approval_call),
            _card_error(),
            _submit_row(
                _decision_icon(),
                CARD.submit_label,
                "approve-all",
                _reject_all(),
                color_scheme=rx.cond(CARD.submit_icon == "ban", "red", "teal"),
            ),
            spacing="2",
            width="100%",
        ),
        on_submit=ChatState.submit_approval,
        width="100%",
    )


def _question(question: rx.Var[str], index: rx.Var[int]) -> rx.Component:
    return rx.vstack(
        rx.text(question, size="2", as_="label"),
        rx.el.input(
            name=f"answer_{index}",
            class_name="ask-answer",
            placeholder=t("ask.placeholder"),
            aria_label=question,
            disabled=BUSY,
            style=FIELD_STYLE,
        ),
        spacing="1",
        width="100%",
    )


def _ask_user() -> rx.Component:
    return rx.form(
        rx.vstack(
            _heading(
                "message_circle_question",
                rx.cond(CARD.questions.length() > 1, t("ask.title_many"), t("ask.title_one")),
                t("ask.hint"),
            ),
            rx.foreach(CARD.questions, _question),
            _card_error(),
            _submit_row("send", t("ask.submit"), "submit-answers"),
            spacing="2",
            width="100%",
        ),
        on_submit=ChatState.submit_answers,
        width="100%",
    )


def _plan() -> rx.Component:
    return rx.vstack(
        _heading("list_checks", t("plan.title"), t("plan.hint")),
        rx.box(
            markdown(CARD.plan),
            class_name="plan-text",
            padding="0.5rem 0.75rem",
            border_radius="var(--radius-2)",
            border=f"1px solid {rx.color('gray', 5)}",
            background=rx.color("gray", 1),
            width="100%",
        ),
        _card_error(),
        rx.form(
            rx.vstack(
                rx.el.textarea(
                    id="plan-feedback",
                    name="feedback",
                    placeholder=t("plan.feedback_placeholder"),
                    aria_label=t("plan.feedback_label"),
                    rows=2,
                    disabled=BUSY,
                    style={**FIELD_STYLE, "resize": "vertical"},
                ),
                rx.hstack(
                    rx.button(
                        t("plan.send_back"),
                        id="send-plan-feedback",
                        type="submit",
                        variant="soft",
                        color_scheme="gray",
                        disabled=BUSY,
                    ),
                    rx.button(
                        rx.icon("check", size=14),
                        t("plan.approve"),
                        id="approve-plan",
                        type="button",
                        loading=BUSY,
                        disabled=BUSY,
                        on_click=ChatState.approve_plan,
                    ),
                    justify="end",
                    spacing="2",
                    width="100%",
                ),
                spacing="2",
                width="100%",
            ),
            on_submit=ChatState.send_plan_feedback,
            width="100%",
        ),
        spacing="2",
        width="100%",
    )


def interrupt_card() -> rx.Component:
    """The pending card of the open session (inside the live bubble), when there is one."""
    return rx.cond(
        CARD.kind != "",
        rx.box(
            rx.match(
                CARD.kind,
                ("tool_approval", _tool_approval()),
                ("ask_user", _ask_user()),
                ("plan", _plan()),
                rx.fragment(),
            ),
            class_name="interrupt-card",
            data_kind=CARD.kind,
            data_submitting=rx.cond(BUSY, "true", "false"),
            padding="0.75rem",
            border_radius="var(--radius-3)",
            border=f"1px solid {rx.color('amber', 7)}",
            background=rx.color("amber", 2),
            width="100%",
        ),
    )
