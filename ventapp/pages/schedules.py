"""The schedules page (route ``/schedules``): list, create/edit form, run now, runs table.

Every sentence comes from :mod:`ventapp.i18n`. DOM hooks: ``#new-schedule``; rows
``.schedule-row`` (``data-schedule-id``) with ``.schedule-name``, ``.schedule-cron``,
``.schedule-description``, ``.schedule-next``, ``.schedule-last``, ``.schedule-enabled``,
``.schedule-run-now``, ``.schedule-show-runs``, ``.schedule-edit``, ``.schedule-delete`` (in ``#schedules-table-scroll``),
which opens ``#schedule-delete-dialog`` (``#schedule-delete-cancel``, ``#schedule-delete-confirm``);
the form ``#schedule-form`` with ``#schedule-name``, ``#schedule-prompt``, ``#schedule-cron``,
``#schedule-mode``, ``.schedule-form-enabled`` (each with its ``<label>``),
``#cron-error``, ``#cron-description``, ``.cron-preview-item``, ``#schedule-save``; the runs
table ``#schedule-runs`` with ``.schedule-run-row`` (``data-status``) and ``.schedule-run-open``.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.confirm_dialog import confirm_dialog
from ventapp.pages.components.header import page_bar
from ventapp.pages.components.lang import t
from ventapp.pages.components.page_frame import page_frame, refusal_callout, section_head
from ventapp.state.auth_state import AuthState
from ventapp.state.schedules_state import RunView, SchedulesState, ScheduleView

CARD_STYLE = {
    "border": f"1px solid {rx.color('gray', 5)}",
    "border_radius": "var(--radius-4)",
    "padding": "1rem",
    "background": rx.color("gray", 2),
    "width": "100%",
}
STATUS_COLOURS = {
    "success": "green",
    "waiting_input": "amber",
    "running": "blue",
    "failed": "red",
    "rejected": "red",
    "interrupted": "red",
    "missed": "orange",
    "skipped": "gray",
    "cancelled": "gray",
}


def _status_badge(status: rx.Var[str], label: rx.Var[str]) -> rx.Component:
    return rx.badge(
        label,
        color_scheme=rx.match(status, *STATUS_COLOURS.items(), "gray"),
        variant="soft",
        data_status=status,
    )


def _top_bar() -> rx.Component:
    return page_bar(
        "calendar_clock", t("schedules.title"), SchedulesState.user_name, SchedulesState.relocalise
    )


def _row(schedule: rx.Var[ScheduleView]) -> rx.Component:
    return rx.table.row(
        # Long names and expressions break anywhere rather than widen the table past its card.
        rx.table.cell(
            rx.text(schedule.name, weight="medium", class_name="schedule-name", overflow_wrap="anywhere"),
            min_width="6rem",
        ),
        rx.table.cell(
            rx.vstack(
                rx.code(schedule.cron, class_name="schedule-cron", overflow_wrap="anywhere"),
                rx.text(
                    schedule.description,
                    size="1",
                    color_scheme="gray",
                    class_name="schedule-description",
                ),
                spacing="1",
            ),
            min_width="9rem",  # an expression on one line (at 390 px it stood one field a line)
        ),
        rx.table.cell(rx.text(schedule.next_run, size="2", class_name="schedule-next", white_space="nowrap")),
        rx.table.cell(
            rx.box(_status_badge(schedule.last_status, schedule.last_label), class_name="schedule-last")
        ),
        rx.table.cell(
            rx.switch(
                checked=schedule.enabled,
                on_change=lambda value: SchedulesState.toggle_enabled(schedule.id, value),
                class_name="schedule-enabled",
                aria_label=t("schedules.col.enabled"),
            )
        ),
        rx.table.cell(
            rx.hstack(
                rx.button(
                    rx.icon("play", size=14),
                    t("schedules.run_now"),
                    size="1",
                    on_click=SchedulesState.run_now(schedule.id),
                    class_name="schedule-run-now",
                ),
                rx.button(
                    t("schedules.runs"),
                    size="1",
                    variant="soft",
                    on_click=SchedulesState.show_runs(schedule.id),
                    class_name="schedule-show-runs",
                ),
                rx.icon_button(
                    rx.icon("pencil", size=14),
                    size="1",
                    variant="ghost",
                    on_click=SchedulesState.open_edit(schedule.id),
                    class_name="schedule-edit",
                    aria_label=t("schedules.edit"),
                ),
                rx.icon_button(
                    rx.icon("trash_2", size=14),
                    size="1",
                    variant="ghost",
                    color_scheme="red",
                    on_click=SchedulesState.ask_delete(schedule.id),
                    class_name="schedule-delete",
                    aria_label=t("schedules.delete"),
                ),
                spacing="2",
                align="center",
                # The buttons wrap in a narrow column rather than widen the table past its card
                # (a 1,400 px window cut the delete icon off); the ghost icons' outset stays inside.
                flex_wrap="wrap",
                padding_x="var(--space-1)",
            ),
            min_width="7rem",
        ),
        class_name="schedule-row",
        data_schedule_id=schedule.id,
        key=schedule.id,
    )


def _list() -> rx.Component:
    return rx.vstack(
        section_head(
            rx.heading(t("schedules.title"), as_="h1", size="4"),
            rx.icon_button(
                rx.icon("refresh_cw", size=14),
                variant="ghost",
                on_click=SchedulesState.refresh,
                id="schedules-refresh",
                aria_label=t("common.refresh"),
            ),
            rx.button(
                rx.icon("plus", size=14),
                t("schedules.new"),
                on_click=SchedulesState.open_new,
                id="new-schedule",
            ),
        ),
        rx.text(SchedulesState.intro, size="2", color_scheme="gray"),
        rx.cond(
            SchedulesState.schedules.length() > 0,
            rx.box(
                rx.table.root(
                    rx.table.header(
                        rx.table.row(
                            *[
                                # A heading on one line: 上次运行 broke into 上次运 / 行, even at 1,400 px.
                                rx.table.column_header_cell(
                                    t(f"schedules.col.{column}"), white_space="nowrap"
                                )
                                for column in ("name", "cron", "next", "last", "enabled", "actions")
                            ]
                        )
                    ),
                    rx.table.body(rx.foreach(SchedulesState.schedules, _row)),
                    size="1",
                    width="100%",
                ),
                overflow_x="auto",
                width="100%",
                id="schedules-table-scroll",
            ),
            rx.text(t("schedules.empty"), size="2", color_scheme="gray", id="schedules-empty"),
        ),
        spacing="3",
        style=CARD_STYLE,
        id="schedules-list",
    )


def _run_status(run: rx.Var[RunView]) -> rx.Component:
    """The run's status, and why it failed or did not run on a line under it (seen without hovering)."""
    return rx.vstack(
        _status_badge(run.status, run.label),
        rx.cond(
            run.error != "",
            # A sentence in a table of one-line cells: it wraps, in a column wide enough to read.
            rx.box(
                rx.text(run.error, size="1", color_scheme="gray", class_name="schedule-run-reason"),
                white_space="normal",
                min_width="14rem",
            ),
        ),
        spacing="1",
        align="start",
    )


def _run_row(run: rx.Var[RunView]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(rx.text(run.scheduled_for, size="2")),
        rx.table.cell(rx.text(run.trigger, size="2")),
        rx.table.cell(_run_status(run)),
        rx.table.cell(rx.text(run.tokens, size="2")),
        rx.table.cell(
            rx.cond(run.href != "", rx.link(t("runs.open"), href=run.href, class_name="schedule-run-open"))
        ),
        class_name="schedule-run-row",
        data_status=run.status,
        key=run.id,
    )


def _runs() -> rx.Component:
    return rx.cond(
        SchedulesState.runs_for != "",
        rx.vstack(
            rx.hstack(
                rx.heading(SchedulesState.runs_title, as_="h2", size="3", id="schedule-runs-title"),
                rx.spacer(),
                rx.icon_button(
                    rx.icon("refresh_cw", size=14),
                    variant="ghost",
                    on_click=SchedulesState.refresh_runs,
                    id="schedule-runs-refresh",
                    aria_label=t("common.refresh"),
                ),
                width="100%",
                align="center",
            ),
            rx.cond(
                SchedulesState.runs.length() > 0,
                rx.box(
                    rx.table.root(
                        rx.table.header(
                            rx.table.row(
                                *[
                                    rx.table.column_header_cell(t(f"runs.col.{column}"))
                                    for column in ("when", "trigger", "status", "tokens", "session")
                                ]
                            )
                        ),
                        rx.table.body(rx.foreach(SchedulesState.runs, _run_row)),
                        size="1",
                        width="100%",
                        # One line a run, scrolling sideways in its card on a phone (as the usage ledger):
                        # at 390 px 立即执行, 会话 and 打开 broke a character a line.
                        white_space="nowrap",
                    ),
                    overflow_x="auto",
                    width="100%",
                ),
                rx.text(t("runs.empty"), size="2", color_scheme="gray"),
            ),
            spacing="3",
            style=CARD_STYLE,
            id="schedule-runs",
        ),
    )


def _label(key: str, field_id: str) -> rx.Component:
    """A form field's caption as its real ``<label for=…>``: screen readers name the field by it
    (they read the placeholder when the caption was plain text), and clicking it focuses the field."""
    return rx.el.label(rx.text(t(key), as_="span", size="2", weight="medium"), html_for=field_id)


def _delete_dialog() -> rx.Component:
    """Asks before a schedule is deleted, naming it and saying what goes and what stays."""
    return confirm_dialog(
        title=t("schedules.delete_title"),
        body=t("schedules.delete_body", name=SchedulesState.delete_name),
        confirm=t("schedules.delete"),
        is_open=SchedulesState.delete_id != "",
        on_open_change=SchedulesState.on_delete_open_change,
        on_cancel=SchedulesState.cancel_delete,
        on_confirm=SchedulesState.confirm_delete,
        cancel_id="schedule-delete-cancel",
        confirm_id="schedule-delete-confirm",
        id="schedule-delete-dialog",
    )


def _form() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(rx.cond(SchedulesState.form_id != "", t("form.title_edit"), t("form.title_new"))),
            rx.form(
                rx.vstack(
                    _label("form.name", "schedule-name"),
                    rx.input(
                        name="name",
                        id="schedule-name",
                        default_value=SchedulesState.form_name,
                        placeholder=t("form.name_placeholder"),
                        max_length=200,
                        width="100%",
                    ),
                    _label("form.prompt", "schedule-prompt"),
                    rx.text_area(
                        name="prompt",
                        id="schedule-prompt",
                        default_value=SchedulesState.form_prompt,
                        placeholder=t("form.prompt_placeholder"),
                        rows="4",
                        width="100%",
                    ),
                    _label("form.cron", "schedule-cron"),
                    rx.input(
                        name="cron",
                        id="schedule-cron",
                        default_value=SchedulesState.form_cron,
                        placeholder=t("form.cron_placeholder"),
                        on_change=SchedulesState.type_cron.debounce(250),
                        font_family="monospace",
                        width="100%",
                    ),
                    rx.text(SchedulesState.cron_help, size="1", color_scheme="gray"),
                    rx.cond(
                        SchedulesState.cron_error != "",
                        refusal_callout(SchedulesState.cron_error, id="cron-error", size="1", alert=False),
                        rx.vstack(
                            rx.text(SchedulesState.cron_description, size="2", id="cron-description"),
                            rx.text(t("form.preview"), size="1", weight="medium"),
                            rx.list.unordered(
                                rx.foreach(
                                    SchedulesState.cron_preview,
                                    lambda moment: rx.list.item(moment, class_name="cron-preview-item"),
                                ),
                                size="1",
                                id="cron-preview",
                            ),
                            spacing="1",
                        ),
                    ),
                    rx.hstack(
                        _label("form.mode", "schedule-mode"),
                        rx.select.root(
                            rx.select.trigger(id="schedule-mode"),
                            rx.select.content(
                                rx.select.item(t("form.mode_full"), value="full"),
                                rx.select.item(t("form.mode_plan"), value="plan"),
                            ),
                            value=SchedulesState.form_mode,
                            on_change=SchedulesState.pick_mode,
                        ),
                        rx.spacer(),
                        # The switch inside its label, without an id: a form control with an id
                        # is submitted by it (deprecated in Reflex 0.10.1); save reads form_enabled.
                        rx.el.label(
                            rx.text(t("form.enabled"), as_="span", size="2", weight="medium"),
                            rx.switch(
                                checked=SchedulesState.form_enabled,
                                on_change=SchedulesState.switch_enabled,
                                class_name="schedule-form-enabled",
                            ),
                            display="flex",
                            align_items="center",
                            gap="var(--space-2)",
                        ),
                        align="center",
                        width="100%",
                    ),
                    rx.cond(
                        SchedulesState.form_error != "",
                        refusal_callout(SchedulesState.form_error, id="form-error", size="1"),
                    ),
                    rx.hstack(
                        rx.dialog.close(
                            rx.button(t("form.cancel"), variant="soft", color_scheme="gray", type="button")
                        ),
                        rx.button(t("form.save"), type="submit", id="schedule-save"),
                        justify="end",
                        width="100%",
                    ),
                    spacing="2",
                    width="100%",
                ),
                on_submit=SchedulesState.save,
                reset_on_submit=False,
                id="schedule-form",
            ),
            max_width="36rem",
        ),
        open=SchedulesState.form_open,
        on_open_change=SchedulesState.on_form_open_change,
    )


def _body() -> rx.Component:
    return rx.cond(
        ~SchedulesState.loaded,
        rx.center(rx.spinner(size="3"), padding_top="10vh"),
        rx.cond(
            SchedulesState.problem != "",
            refusal_callout(SchedulesState.problem, id="schedules-problem"),
            rx.cond(
                SchedulesState.user_name == "",
                rx.callout(
                    rx.link(t("schedules.needs_name"), href="/"), icon="user_round", id="schedules-needs-name"
                ),
                rx.vstack(
                    rx.cond(
                        SchedulesState.waiting_count > 0,
                        rx.callout(
                            SchedulesState.waiting_banner,
                            icon="bell_ring",
                            color_scheme="amber",
                            id="schedules-waiting",
                        ),
                    ),
                    rx.cond(
                        SchedulesState.notice != "",
                        rx.cond(
                            SchedulesState.notice_refused,  # as every other refusal reads
                            refusal_callout(
                                SchedulesState.notice,
                                id="schedules-notice",
                                size="1",
                                class_name="schedules-refused",
                            ),
                            rx.callout(SchedulesState.notice, icon="info", size="1", id="schedules-notice"),
                        ),
                    ),
                    _list(),
                    _runs(),
                    spacing="4",
                    width="100%",
                    min_width="0",
                ),
            ),
        ),
    )


def schedules_page() -> rx.Component:
    """The whole schedules screen; ``on_mount`` reads the user's schedules."""
    return page_frame(
        _top_bar(),
        _body(),
        # Leaving the page ends its following of the schedules (SchedulesState.load_page starts it).
        rx.box(display="none", on_unmount=SchedulesState.leave_page),
        dialogs=[_form(), _delete_dialog()],
        on_mount=[AuthState.check_login, SchedulesState.load_page],
    )
