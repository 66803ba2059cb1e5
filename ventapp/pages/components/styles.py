"""Shared sizes and styles of the chat UI (Radix theme tokens only, so dark mode just works)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from ventapp.i18n import LANGS, MESSAGES

CONTENT_MAX_WIDTH = "52rem"
"""Width of the transcript column and the composer on large screens."""

SIDEBAR_WIDTH = "16rem"

HEADER_HEIGHT = "3.5rem"
"""Height of every page's top bar (the chat's header and the other pages' bar): notices that float
over the page start below it, so they never cover its controls or the model's name."""

MONO = "var(--code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace)"

PRE_STYLE: dict[str, Any] = {
    "font_family": MONO,
    "font_size": "0.8rem",
    "line_height": "1.5",
    "white_space": "pre-wrap",
    "word_break": "break-word",
    "margin": "0",
    "padding": "0.5rem 0.75rem",
    "border_radius": "var(--radius-2)",
    "background": rx.color("gray", 2),
    "border": f"1px solid {rx.color('gray', 5)}",
    "max_height": "14rem",
    "overflow_y": "auto",
}
"""A small monospace block: tool arguments and results."""

MARKDOWN_STYLE: dict[str, Any] = {
    "font_size": "0.95rem",
    "line_height": "1.65",
    "overflow_wrap": "anywhere",
    "& > div > *:first-child, & > *:first-child": {"margin_top": "0"},
    "& table": {
        "display": "block",
        "overflow_x": "auto",
        "border_collapse": "collapse",
        "margin": "0.75rem 0",
        "font_size": "0.9rem",
    },
    "& th, & td": {
        "border": f"1px solid {rx.color('gray', 6)}",
        "padding": "0.35rem 0.75rem",
        "text_align": "left",
    },
    "& th": {"background": rx.color("gray", 3), "font_weight": "600"},
    "& tr:nth-of-type(even) td": {"background": rx.color("gray", 2)},
    "& blockquote": {
        "border_left": f"3px solid {rx.color('accent', 7)}",
        "margin": "0.5rem 0",
        "padding_left": "0.75rem",
        "color": rx.color("gray", 11),
    },
    "& pre": {"max_width": "100%", "overflow_x": "auto"},
    "& img": {"max_width": "100%"},
}
"""Tables, quotes and code inside rendered Markdown (``rx.markdown`` has no table styling)."""


def _code_block(code: Any, **props: Any) -> rx.Component:
    """A fenced code block with its own copy button (``.copy-code``).

    A component map's function cannot follow the page's language, so the button carries its name in
    each language (``.copy-code-label``) and the stylesheet shows the one ``<html lang>`` names.
    """
    labels = [
        rx.el.span(
            MESSAGES[lang]["message.copy_code"], lang=lang, data_lang=lang, class_name="copy-code-label"
        )
        for lang in LANGS
    ]
    copy = rx.icon_button(
        rx.icon("copy", size=14, aria_hidden="true"),
        *labels,
        class_name="copy-code",
        type="button",
        size="1",
        variant="soft",
        color_scheme="gray",
        on_click=rx.set_clipboard(code),
        style={"position": "absolute", "top": "0.5em", "right": "0.5em"},
    )
    return rx.code_block(code, can_copy=True, copy_button=copy, margin_y="1em", wrap_long_lines=True, **props)


def markdown(source: Any) -> rx.Component:
    """Render model or knowledge-base Markdown: GFM tables, code (each block with a copy button), math;
    raw HTML is NOT rendered."""
    return rx.markdown(
        source, use_raw=False, class_name="md-body", style=MARKDOWN_STYLE, component_map={"pre": _code_block}
    )
