"""The usage page (route ``/usage``): today against the quota, 14 days, the ledger, the limit form.

Real (provider-reported) and estimated tokens are always labelled apart (invariant 3);
settlements still waiting to be booked are shown, never silently left out.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.header import brand
from ventapp.pages.components.styles import CONTENT_MAX_WIDTH
from ventapp.state.usage_state import LedgerRowView, UsageState

CARD_STYLE = {
    "border": f"1px solid {rx.color('gray', 5)}",
    "border_radius": "var(--radius-3)",
    "background": rx.color("gray", 2),
    "padding": "1rem 1.1rem",
    "width": "100%",
    "min_width": "0",  # lets a wide table scroll inside the card instead of widening the page
}


def _top_bar() -> rx.Component:
    return rx.hstack(
        rx.link(brand(), href="/", underline="none", color="inherit"),
        rx.badge(rx.icon("gauge", size=12), "Usage", variant="soft"),
        rx.spacer(),
        rx.cond(
            UsageState.user_name != "",
            rx.badge(
                rx.icon("user_round", size=12),
                UsageState.user_name,
                variant="surface",
                color_scheme="gray",
                display=["none", "inline-flex"],
            ),
        ),
        rx.link(
            rx.button(
                rx.icon("message_square", size=14),
                rx.text("Chat", display=["none", "inline"]),
                variant="soft",
                aria_label="Chat",
            ),
            href="/",
        ),
        rx.color_mode.button(variant="ghost", color_scheme="gray"),
        align="center",
        spacing=rx.breakpoints(initial="2", sm="3"),
        height="3.5rem",
        padding_x=["0.75rem", "1rem"],
        border_bottom=f"1px solid {rx.color('gray', 4)}",
        background=rx.color("gray", 1),
        width="100%",
    )


def _figure(label: str, value: rx.Var | str, hint: rx.Var | str = "", id: str = "") -> rx.Component:
    return rx.vstack(
        rx.text(label, size="1", color_scheme="gray", weight="medium"),
        rx.text(value, size="6", weight="bold", id=id or None),
        rx.text(hint, size="1", color_scheme="gray"),
        spacing="1",
        min_width="9rem",
    )


def _quota_bar() -> rx.Component:
    return rx.cond(
        UsageState.limited,
        rx.vstack(
            rx.progress(
                value=UsageState.percent_used,
                max=100,
                color_scheme=rx.cond(UsageState.percent_used >= 90, "red", "teal"),
                id="quota-progress",
            ),
            rx.text(
                UsageState.used_text,
                " of ",
                UsageState.limit_text,
                " tokens used today · ",
                UsageState.remaining_text,
                " left · resets at 00:00 ",
                UsageState.timezone,
                size="1",
                color_scheme="gray",
            ),
            spacing="1",
            width="100%",
        ),
        rx.text("No daily limit.", size="1", color_scheme="gray", id="quota-progress"),
    )


def _today() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.heading("Today", size="4"),
            rx.text(UsageState.day, " (", UsageState.timezone, ")", size="1", color_scheme="gray"),
            align="baseline",
            spacing="2",
        ),
        rx.flex(
            _figure("Tokens", UsageState.total_tokens, "input + output", id="usage-total"),
            _figure("Input", UsageState.input_tokens),
            _figure("Output", UsageState.output_tokens),
            _figure(
                "Cost", UsageState.cost_text, rx.text.span(UsageState.calls, " model calls"), id="usage-cost"
            ),
            wrap="wrap",
            spacing="5",
        ),
        rx.hstack(
            rx.badge(
                "real ",
                UsageState.real_tokens,
                color_scheme="green",
                variant="soft",
                title="Reported by the model provider",
            ),
            rx.cond(
                UsageState.has_estimates,
                rx.badge(
                    "estimate ",
                    UsageState.estimate_tokens,
                    color_scheme="amber",
                    variant="soft",
                    title="Counted offline because the provider reported no usage for these calls",
                ),
            ),
            spacing="2",
            id="usage-sources",
        ),
        _quota_bar(),
        rx.cond(
            UsageState.pending_settlements > 0,
            rx.callout(
                rx.text(
                    UsageState.pending_settlements,
                    " run(s) with ",
                    UsageState.pending_tokens,
                    " tokens are waiting to be booked; they already count toward your limit.",
                ),
                icon="clock",
                color_scheme="amber",
                size="1",
                id="usage-pending",
            ),
        ),
        spacing="3",
        style=CARD_STYLE,
        id="usage-today",
    )


def _chart() -> rx.Component:
    return rx.vstack(
        rx.heading("Last 14 days", size="4"),
        rx.recharts.bar_chart(
            rx.recharts.cartesian_grid(stroke_dasharray="3 3", vertical=False),
            rx.recharts.x_axis(data_key="label"),
            rx.recharts.y_axis(width=60),
            rx.recharts.tooltip(),
            rx.recharts.legend(),
            rx.recharts.bar(
                data_key="input", name="input tokens", stack_id="tokens", fill=rx.color("accent", 9)
            ),
            rx.recharts.bar(
                data_key="output", name="output tokens", stack_id="tokens", fill=rx.color("amber", 9)
            ),
            data=UsageState.series,
            width="100%",
            height=260,
        ),
        spacing="3",
        style=CARD_STYLE,
        id="usage-chart",
    )


def _quota_form() -> rx.Component:
    return rx.vstack(
        rx.heading("Daily limit", size="4"),
        rx.text(
            "Tokens (input + output) you may use per day; 0 means no limit.",
            size="2",
            color_scheme="gray",
        ),
        rx.form(
            rx.hstack(
                rx.input(
                    name="daily_token_limit",
                    value=UsageState.quota_input,
                    on_change=UsageState.edit_quota_input,
                    type="number",
                    min=0,
                    id="quota-input",
                    width="12rem",
                ),
                rx.button("Save", type="submit", id="quota-save"),
                spacing="2",
                align="center",
            ),
            on_submit=UsageState.save_quota,
            id="quota-form",
        ),
        rx.cond(UsageState.quota_error != "", rx.text(UsageState.quota_error, color_scheme="red", size="2")),
        rx.cond(
            UsageState.quota_notice != "", rx.text(UsageState.quota_notice, color_scheme="green", size="2")
        ),
        spacing="2",
        style=CARD_STYLE,
    )


def _row(row: rx.Var[LedgerRowView]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row.when, white_space="nowrap"),
        rx.table.cell(row.model),
        rx.table.cell(
            rx.badge(
                row.source,
                color_scheme=rx.cond(row.source == "real", "green", "amber"),
                variant="soft",
            ),
            rx.cond(
                row.sub_agent,
                rx.badge("sub-agent", variant="outline", color_scheme="gray", margin_left="0.25rem"),
            ),
        ),
        rx.table.cell(row.input_tokens, text_align="right"),
        rx.table.cell(row.output_tokens, text_align="right"),
        rx.table.cell(row.cost, text_align="right", white_space="nowrap"),
        rx.table.cell(rx.code(row.run_short, size="1", variant="ghost", title=row.run_id)),
        class_name="ledger-row",
    )


def _ledger() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.heading("Recent model calls", size="4"),
            rx.spacer(),
            rx.text(UsageState.page_label, size="1", color_scheme="gray"),
            rx.icon_button(
                rx.icon("chevron_left", size=14),
                on_click=UsageState.prev_page,
                disabled=~UsageState.has_prev,
                variant="soft",
                aria_label="Newer",
            ),
            rx.icon_button(
                rx.icon("chevron_right", size=14),
                on_click=UsageState.next_page,
                disabled=~UsageState.has_next,
                variant="soft",
                aria_label="Older",
            ),
            align="center",
            width="100%",
            spacing="2",
        ),
        rx.cond(
            UsageState.rows.length() > 0,
            rx.box(
                rx.table.root(
                    rx.table.header(
                        rx.table.row(
                            *[
                                rx.table.column_header_cell(title, text_align=align)
                                for title, align in [
                                    ("Time", "left"),
                                    ("Model", "left"),
                                    ("Source", "left"),
                                    ("In", "right"),
                                    ("Out", "right"),
                                    ("Cost", "right"),
                                    ("Run", "left"),
                                ]
                            ]
                        )
                    ),
                    rx.table.body(rx.foreach(UsageState.rows, _row)),
                    size="1",
                    width="100%",
                ),
                overflow_x="auto",
                width="100%",
                max_width="100%",
            ),
            rx.text("No model calls booked yet.", size="2", color_scheme="gray"),
        ),
        spacing="3",
        style=CARD_STYLE,
        id="ledger-table",
    )


def _needs_name() -> rx.Component:
    return rx.callout(
        rx.text("Usage is kept per user. ", rx.link("Open the chat", href="/"), " and set your name first."),
        icon="user_round",
        id="usage-needs-name",
    )


def _body() -> rx.Component:
    return rx.cond(
        ~UsageState.loaded,
        rx.center(rx.spinner(size="3"), padding_top="10vh"),
        rx.cond(
            UsageState.user_name == "",
            _needs_name(),
            rx.cond(
                UsageState.problem != "",
                rx.callout(UsageState.problem, icon="triangle_alert", color_scheme="red", id="usage-problem"),
                rx.vstack(
                    _today(), _chart(), _quota_form(), _ledger(), spacing="4", width="100%", min_width="0"
                ),
            ),
        ),
    )


def usage_page() -> rx.Component:
    """The whole usage screen; ``on_mount`` reads the user's figures."""
    return rx.box(
        _top_bar(),
        rx.box(
            _body(),
            max_width=CONTENT_MAX_WIDTH,
            margin_x="auto",
            padding=["1rem 0.75rem 3rem", "1.5rem 1rem 4rem"],
        ),
        min_height="100dvh",
        background=rx.color("gray", 1),
        on_mount=UsageState.load_page,
    )
