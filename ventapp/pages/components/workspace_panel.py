"""The workspace panel: the open session's files, a preview and a download link for each.

DOM hooks: ``#workspace-open`` (the bar's button), ``.workspace-panel`` (the dialog),
``.workspace-file`` rows with ``data-path`` (``.workspace-size``, ``.workspace-time``,
``.workspace-preview`` button, ``.workspace-download`` link), ``.workspace-empty``, and the
preview ``.workspace-view`` with ``data-kind`` (image | csv | markdown | text | other).
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.lang import t
from ventapp.pages.components.styles import PRE_STYLE, markdown
from ventapp.state.workspace_state import WorkspaceFileView, WorkspaceState

SR_ONLY = {
    "position": "absolute",
    "width": "1px",
    "height": "1px",
    "overflow": "hidden",
    "clip": "rect(0 0 0 0)",
    "white_space": "nowrap",
}
"""Read by screen readers, not shown."""


def _row(item: rx.Var[WorkspaceFileView]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(
            rx.el.button(
                rx.icon("file_text", size=14),
                rx.text(item.path, as_="span", style={"overflow_wrap": "anywhere"}),
                type="button",
                class_name="workspace-preview",
                aria_label=t("workspace.preview", name=item.name),
                on_click=WorkspaceState.show(item.path),
                style={
                    "all": "unset",
                    "cursor": "pointer",
                    "display": "inline-flex",
                    "gap": "0.35rem",
                    "align_items": "center",
                },
            ),
        ),
        rx.table.cell(item.size, class_name="workspace-size", white_space="nowrap"),
        rx.table.cell(item.modified, class_name="workspace-time", white_space="nowrap"),
        rx.table.cell(
            rx.el.a(  # a plain link (the router's would navigate): the browser downloads it
                rx.icon("download", size=14),
                href=item.download_url,
                download=item.name,
                class_name="workspace-download",
                aria_label=t("workspace.download", name=item.name),
                title=t("workspace.download", name=item.name),
            ),
        ),
        class_name="workspace-file",
        data_path=item.path,
    )


def _csv_row(row: rx.Var[list[str]]) -> rx.Component:
    return rx.table.row(rx.foreach(row, lambda value: rx.table.cell(value)))


def _preview() -> rx.Component:
    view = WorkspaceState.preview
    body = rx.match(
        view.kind,
        ("image", rx.image(src=view.url, alt=view.name, max_width="100%")),
        ("markdown", markdown(view.text)),
        ("csv", rx.table.root(rx.table.body(rx.foreach(view.rows, _csv_row)), size="1", variant="surface")),
        ("text", rx.el.pre(view.text, tab_index=0, style=PRE_STYLE)),
        rx.text(t("workspace.no_preview"), size="2", color_scheme="gray"),
    )
    return rx.cond(
        view.path != "",
        rx.box(
            rx.text(view.path, size="2", weight="medium", margin_bottom="0.5rem"),
            body,
            class_name="workspace-view",
            data_kind=view.kind,
            max_height="45vh",
            overflow="auto",
            tab_index=0,
            padding_top="0.75rem",
            border_top="1px solid var(--gray-5)",
        ),
    )


def workspace_panel() -> rx.Component:
    """The bar's folder button and the dialog it opens (read-only)."""
    return rx.dialog.root(
        rx.dialog.trigger(
            # No tooltip around it: the trigger must be the button itself to receive the click.
            rx.icon_button(
                rx.icon("folder_open", size=16),
                id="workspace-open",
                aria_label=t("workspace.open"),
                title=t("workspace.open"),
                variant="ghost",
                color_scheme="gray",
                size="2",
                type="button",
            ),
        ),
        rx.dialog.content(
            rx.dialog.title(t("workspace.title")),
            rx.dialog.description(t("workspace.hint"), size="2", color_scheme="gray"),
            rx.cond(
                WorkspaceState.files.length() > 0,
                rx.table.root(
                    rx.table.header(
                        rx.table.row(
                            rx.table.column_header_cell(t("workspace.name")),
                            rx.table.column_header_cell(t("workspace.size")),
                            rx.table.column_header_cell(t("workspace.modified")),
                            rx.table.column_header_cell(
                                rx.el.span(t("workspace.download_col"), class_name="rt-sr-only")
                            ),
                        )
                    ),
                    rx.table.body(rx.foreach(WorkspaceState.files, _row)),
                    size="1",
                    width="100%",
                    margin_top="0.75rem",
                ),
                rx.text(t("workspace.empty"), size="2", class_name="workspace-empty", margin_top="0.75rem"),
            ),
            _preview(),
            rx.flex(
                rx.dialog.close(rx.button(t("common.close"), variant="soft", color_scheme="gray")),
                justify="end",
                margin_top="1rem",
            ),
            class_name="workspace-panel",
            max_width="52rem",
        ),
        open=WorkspaceState.panel_open,
        on_open_change=WorkspaceState.set_panel_open,
    )
