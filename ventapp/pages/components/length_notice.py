"""A message box at its length limit says so, instead of the browser cutting a paste in silence.

A ``<textarea maxlength>`` drops whatever goes past the limit (a pasted report, a long table) with
no sign; the API refuses the same length with "消息超过 100,000 个字符。" (try18). The check runs in
the browser on each input: no round trip per keystroke.
"""

from __future__ import annotations

import json

import reflex as rx

from ventapp.agent.pipeline import MAX_MESSAGE_CHARS
from ventapp.i18n.formats import number
from ventapp.pages.components.lang import t

FULL_NOTICE_ID = "composer-full"
"""DOM id of the sentence shown while the chat box holds :data:`MAX_MESSAGE_CHARS` characters."""


def shows_when_full(notice_id: str = FULL_NOTICE_ID) -> rx.Var:
    """The ``onChange`` of a textarea with ``maxlength``: shows ``#notice_id`` while the box is full.

    React's ``onChange`` fires on every input, as ``onInput`` would; ``onInput`` itself is taken
    by Reflex's ``auto_height`` (a second one would replace it).
    """
    return rx.Var(
        f"""(e) => {{
  const note = document.getElementById({json.dumps(notice_id)});
  if (note) note.style.display = e.target.value.length >= e.target.maxLength ? "block" : "none";
}}"""
    )


def hides_on_reset(notice_id: str = FULL_NOTICE_ID) -> rx.Var:
    """The ``onReset`` of the box's form: a sent message leaves the box empty, so the notice goes."""
    return rx.Var(
        f"""() => {{
  const note = document.getElementById({json.dumps(notice_id)});
  if (note) note.style.display = "none";
}}"""
    )


def full_notice(notice_id: str = FULL_NOTICE_ID) -> rx.Component:
    """The sentence, hidden until :func:`shows_when_full` shows it (``role=status``: read out once).

    Its ``display: none`` is a class (Reflex compiles ``style`` into one): the script overrides it
    inline with ``block``.
    """
    return rx.text(
        t("composer.full", limit=number(MAX_MESSAGE_CHARS, "zh-CN")),
        id=notice_id,
        role="status",
        size="1",
        color_scheme="amber",
        text_align="center",
        margin_top="0.4rem",
        style={"display": "none"},
    )
