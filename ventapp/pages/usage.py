"""The usage page (route ``/usage``): today against the quota, 14 days, the ledger, the limit form.

Real (provider-reported) and estimated tokens are always labelled apart (invariant 3);
settlements still waiting to be booked are shown, never silently left out.
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars.base import Var
from reflex.vars.function import FunctionStringVar

from ventapp.pages.components.header import page_bar
from ventapp.pages.components.lang import active_lang, t
from ventapp.pages.components.page_frame import page_frame, refusal_callout, section_head
from ventapp.state.auth_state import AuthState
from ventapp.state.usage_overview_state import UsageOverviewState, UserUsageView
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
    return page_bar("gauge", t("nav.usage"), UsageState.user_name, UsageState.relocalise)


def _figure(label: rx.Var[str], value: rx.Var | str, hint: rx.Var | str = "", id: str = "") -> rx.Component:
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
                aria_label=t("usage.quota_progress"),
            ),
            rx.text(
                t(
                    "usage.quota_line",
                    used=UsageState.used_text,
                    limit=UsageState.limit_text,
                    left=UsageState.remaining_text,
                    tz=UsageState.timezone,
                ),
                size="1",
                color_scheme="gray",
            ),
            spacing="1",
            width="100%",
        ),
        rx.text(t("usage.no_limit"), size="1", color_scheme="gray", id="quota-progress"),
    )


def _today() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.heading(t("usage.today"), as_="h2", size="4"),
            rx.text(UsageState.day, " (", UsageState.timezone, ")", size="1", color_scheme="gray"),
            align="baseline",
            spacing="2",
        ),
        rx.flex(
            _figure(t("usage.tokens"), UsageState.total_tokens, t("usage.tokens_hint"), id="usage-total"),
            _figure(t("usage.input"), UsageState.input_tokens),
            _figure(t("usage.output"), UsageState.output_tokens),
            _figure(
                t("usage.cost"),
                UsageState.cost_text,
                t("usage.calls", count=UsageState.calls),
                id="usage-cost",
            ),
            wrap="wrap",
            spacing="5",
        ),
        rx.hstack(
            rx.badge(
                t("usage.real", count=UsageState.real_tokens),
                color_scheme="green",
                variant="soft",
                title=t("usage.real_hint"),
            ),
            rx.cond(
                UsageState.has_estimates,
                rx.badge(
                    t("usage.estimate", count=UsageState.estimate_tokens),
                    color_scheme="amber",
                    variant="soft",
                    title=t("usage.estimate_hint"),
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
                    t("usage.pending", runs=UsageState.pending_settlements, tokens=UsageState.pending_tokens)
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


GROUPED = FunctionStringVar.create(f"((value) => new Intl.NumberFormat({active_lang()}).format(value))")
"""Token counts on the chart's axis and tooltip with thousands separators, as everywhere else (12,345)."""

TOKEN_AXIS_FLOOR = 1000
"""The token axis reaches at least this far: with no usage it read 0–4 (a range no token count has)."""
_TOKEN_DOMAIN = Var(
    "[0, (dataMax) => { const quarter = Math.max(dataMax, "
    f"{TOKEN_AXIS_FLOOR}) / 4; const unit = 10 ** Math.floor(Math.log10(quarter)); "
    "return 4 * unit * [1, 2, 2.5, 5, 10].find((k) => k * unit >= quarter); }]"
)
"""0 to four round steps (0–1,000 with no usage, 0–8,000 for 6,678): five ticks that read well."""


def _chart() -> rx.Component:
    return rx.vstack(
        rx.heading(t("usage.chart_title"), as_="h2", size="4"),
        rx.recharts.bar_chart(
            rx.recharts.cartesian_grid(stroke_dasharray="3 3", vertical=False),
            rx.recharts.x_axis(
                # Day labels one fixed step apart (the default spaced them unevenly, crowded at the end),
                # counted back from today so today's bar is always labelled (tester #11, 2 Dec: ticks
                # 11/19 … 12/1, the only bar, 12/2, unlabelled). Recharts 3 has the option; Reflex's
                # type for the prop does not list it yet.
                data_key="label",
                custom_attrs={"interval": "equidistantPreserveEnd"},
                # The end-anchored labels must each fit inside the axis, today's too: on a phone a
                # day's bar is narrower than its label, which then overflowed the end, and only
                # today's label was left (recharts drops a step that does not fit). Room at the ends.
                padding={"left": 14, "right": 14},
            ),
            rx.recharts.y_axis(
                width=80, tick_formatter=GROUPED, domain=_TOKEN_DOMAIN, allow_decimals=False, tick_count=5
            ),
            # Reflex's tooltip has no ``formatter`` prop: as a keyword it landed in ``wrapperStyle``.
            rx.recharts.tooltip(custom_attrs={"formatter": GROUPED}),
            rx.recharts.legend(),
            rx.recharts.bar(
                data_key="input", name=t("usage.chart_input"), stack_id="tokens", fill=rx.color("accent", 9)
            ),
            rx.recharts.bar(
                data_key="output", name=t("usage.chart_output"), stack_id="tokens", fill=rx.color("amber", 9)
            ),
            data=UsageState.series,
            width="100%",
            height=260,
        ),
        spacing="3",
        style=CARD_STYLE,
        id="usage-chart",
    )


def _limit_input(value: Any, on_change: Any, input_id: str, label: Any, **props: Any) -> rx.Component:
    """The daily token limit field (tokens, 0 = unlimited) of the user's own and the operators' form."""
    return rx.input(
        name="daily_token_limit",
        value=value,
        on_change=on_change,
        type="number",
        min=0,
        id=input_id,
        width="12rem",
        aria_label=label,
        **props,
    )


def _quota_confirm() -> rx.Component:
    """Asks before a limit at or below today's usage stops the user's chats until midnight."""
    return rx.vstack(
        rx.text(UsageState.quota_warning, color_scheme="amber", size="2", id="quota-warning"),
        rx.hstack(
            rx.button(
                t("usage.limit_confirm_yes"),
                color_scheme="red",
                on_click=UsageState.confirm_quota,
                id="quota-confirm",
            ),
            rx.button(
                t("common.cancel"),
                variant="soft",
                color_scheme="gray",
                on_click=UsageState.cancel_quota,
                id="quota-cancel",
            ),
            spacing="2",
        ),
        role="alert",
        spacing="2",
    )


def _quota_form() -> rx.Component:
    return rx.vstack(
        rx.heading(t("usage.limit_title"), as_="h2", size="4"),
        rx.text(
            t("usage.limit_hint"),
            size="2",
            color_scheme="gray",
        ),
        rx.cond(  # an operator may set any limit: no ceiling of their own to show
            ~UsageOverviewState.is_operator,
            rx.text(UsageState.ceiling_text, size="2", color_scheme="gray", id="quota-ceiling"),
        ),
        rx.form(
            rx.hstack(
                _limit_input(
                    UsageState.quota_input, UsageState.edit_quota_input, "quota-input", t("usage.limit_title")
                ),
                rx.button(t("common.save"), type="submit", id="quota-save"),
                spacing="2",
                align="center",
            ),
            on_submit=UsageState.save_quota,
            id="quota-form",
        ),
        rx.cond(UsageState.quota_warning != "", _quota_confirm()),
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
                rx.cond(row.source == "real", t("usage.source_real"), t("usage.source_estimate")),
                color_scheme=rx.cond(row.source == "real", "green", "amber"),
                data_source=row.source,
                variant="soft",
            ),
            rx.cond(
                row.sub_agent,
                rx.badge(t("usage.sub_agent"), variant="outline", color_scheme="gray", margin_left="0.25rem"),
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
        section_head(
            rx.heading(t("usage.ledger_title"), as_="h2", size="4"),
            rx.text(UsageState.page_label, size="1", color_scheme="gray"),
            rx.icon_button(
                rx.icon("chevron_left", size=14),
                on_click=UsageState.prev_page,
                disabled=~UsageState.has_prev,
                variant="soft",
                aria_label=t("usage.newer"),
            ),
            rx.icon_button(
                rx.icon("chevron_right", size=14),
                on_click=UsageState.next_page,
                disabled=~UsageState.has_next,
                variant="soft",
                aria_label=t("usage.older"),
            ),
        ),
        rx.cond(
            UsageState.rows.length() > 0,
            rx.box(
                rx.table.root(
                    rx.table.header(
                        rx.table.row(
                            *[
                                rx.table.column_header_cell(t(f"usage.col.{column}"), text_align=align)
                                for column, align in [
                                    ("time", "left"),
                                    ("model", "left"),
                                    ("source", "left"),
                                    ("in", "right"),
                                    ("out", "right"),
                                    ("cost", "right"),
                                    ("run", "left"),
                                ]
                            ]
                        )
                    ),
                    rx.table.body(rx.foreach(UsageState.rows, _row)),
                    size="1",
                    width="100%",
                    # One line per call: on a phone the table scrolls sideways in its card instead of
                    # squeezing its cells into columns of broken words that looked cut off.
                    white_space="nowrap",
                ),
                overflow_x="auto",
                width="100%",
                max_width="100%",
            ),
            rx.text(t("usage.ledger_empty"), size="2", color_scheme="gray"),
        ),
        spacing="3",
        style=CARD_STYLE,
        id="ledger-table",
    )


def _user_row(row: rx.Var[UserUsageView]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row.user_name),
        rx.table.cell(row.tokens, text_align="right"),
        rx.table.cell(row.calls, text_align="right"),
        rx.table.cell(row.quota, text_align="right"),
        rx.table.cell(row.remaining, text_align="right"),
        rx.table.cell(
            rx.button(
                t("auth.quota_for_pick"),
                size="1",
                variant="soft",
                on_click=UsageOverviewState.pick_user(row.user_name),
                class_name="quota-pick",
            )
        ),
    )


def _quota_for_user() -> rx.Component:
    """Operators only: set any user's daily limit (what ``PUT /api/usage/quota`` with ``for_user`` does)."""
    return rx.vstack(
        rx.heading(t("auth.quota_for_title"), as_="h3", size="3"),
        rx.text(t("auth.quota_for_hint"), size="2", color_scheme="gray"),
        rx.form(
            rx.hstack(
                rx.input(
                    name="for_user",
                    value=UsageOverviewState.set_for,
                    on_change=UsageOverviewState.edit_for,
                    id="quota-for-user",
                    width="12rem",
                    aria_label=t("auth.col.user"),
                    placeholder=t("auth.col.user"),
                ),
                _limit_input(
                    UsageOverviewState.set_limit,
                    UsageOverviewState.edit_limit,
                    "quota-for-limit",
                    t("auth.col.quota"),
                    placeholder=t("auth.col.quota"),
                ),
                rx.button(t("common.save"), type="submit", id="quota-for-save"),
                spacing="2",
                align="center",
                wrap="wrap",
            ),
            on_submit=UsageOverviewState.save_for,
            id="quota-for-form",
        ),
        rx.cond(
            UsageOverviewState.set_error != "",
            rx.text(UsageOverviewState.set_error, color_scheme="red", size="2", id="quota-for-error"),
        ),
        rx.cond(
            UsageOverviewState.set_notice != "",
            rx.text(UsageOverviewState.set_notice, color_scheme="green", size="2", id="quota-for-notice"),
        ),
        spacing="2",
        width="100%",
    )


def _every_user() -> rx.Component:
    """Operators only: every user's usage today (the list stays empty for anyone else)."""
    columns = [
        ("user", "left"),
        ("tokens", "right"),
        ("calls", "right"),
        ("quota", "right"),
        ("remaining", "right"),
    ]
    return rx.cond(
        UsageOverviewState.is_operator,
        rx.vstack(
            rx.heading(t("auth.users_today"), as_="h2", size="4"),
            rx.box(
                rx.table.root(
                    rx.table.header(
                        rx.table.row(
                            *[
                                rx.table.column_header_cell(t(f"auth.col.{column}"), text_align=align)
                                for column, align in columns
                            ],
                            rx.table.column_header_cell(""),
                        )
                    ),
                    rx.table.body(rx.foreach(UsageOverviewState.users, _user_row)),
                    size="1",
                    width="100%",
                    # As the ledger: at 390 px its headings and its button broke into a character a line.
                    white_space="nowrap",
                ),
                overflow_x="auto",
                width="100%",
            ),
            _quota_for_user(),
            spacing="3",
            style=CARD_STYLE,
            id="every-user-usage",
        ),
    )


def _needs_name() -> rx.Component:
    return rx.callout(
        rx.link(t("usage.needs_name"), href="/"),
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
                refusal_callout(UsageState.problem, id="usage-problem"),
                rx.vstack(
                    _today(),
                    _chart(),
                    _quota_form(),
                    _ledger(),
                    _every_user(),
                    spacing="4",
                    width="100%",
                    min_width="0",
                ),
            ),
        ),
    )


def usage_page() -> rx.Component:
    """The whole usage screen; ``on_mount`` reads the user's figures."""
    return page_frame(
        _top_bar(), _body(), on_mount=[AuthState.check_login, UsageState.load_page, UsageOverviewState.load]
    )
