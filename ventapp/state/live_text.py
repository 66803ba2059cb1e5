"""The streamed answer's text in the browser: a buffer there, fed only what is new (issue 18 item 1).

Reflex sends the whole value of every state var that changed (DESIGN.md, "UI
streaming"), so an answer kept in a state var is resent in full at every flush and its
bytes grow with the square of its length. The text of the live answer therefore lives in
the browser, in a client-side variable (:data:`LIVE_TEXT`, a React state), and the
server sends it small events: ``put`` (the whole text, once per answer or after a
reload) and ``add`` (what was appended since the last flush, with the offset it goes
at). The bubble renders that variable through the same Markdown component as a
finished answer, and the finished answer still arrives once, in ``messages``.

Each live answer has an id (``ChatState.live_id``); the browser shows the buffer only
while it holds that id's text, so a tab never shows a previous answer's text. An ``add``
that does not fit (the page was reloaded and has no text yet) is dropped; the ``put``
the reloaded page gets carries everything. Offsets count UTF-16 code units, as
JavaScript strings do.
"""

from __future__ import annotations

import json
from typing import Any

import reflex as rx
from reflex.experimental.client_state import ClientStateVar
from reflex.vars import Var, VarData

LIVE_TEXT = ClientStateVar.create("livetext", {"id": "", "text": ""})
"""``{id, text}``: the live answer's text as the browser holds it."""

_SLOT = "refs['_client_state_livetext']"
_SETTER = f"(refs['_client_state_setLivetext'] ?? ((v) => {{ {_SLOT} = v; }}))"
# Evaluated by Reflex's `_call_script` handler, in the scope where `refs` is defined.
_HELPER = (
    "(window.__ventLive ??= {"
    f"put(id, text) {{ {_SETTER}({{id, text}}); }},"
    "add(id, at, delta) {"
    f" const cur = {_SLOT};"
    " if (!cur || cur.id !== id || cur.text.length < at) return;"
    " if (cur.text.length >= at + delta.length) return;"
    f" {_SETTER}({{id, text: cur.text.slice(0, at) + delta}});"
    "}})"
)


def utf16_len(text: str) -> int:
    """Length of ``text`` as JavaScript counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def put_text(live_id: str, text: str) -> Any:
    """The event that sets the browser's live text to ``text`` (whole)."""
    return rx.call_script(f"{_HELPER}.put({json.dumps(live_id)},{json.dumps(text, ensure_ascii=False)})")


def add_text(live_id: str, at: int, delta: str) -> Any:
    """The event that appends ``delta`` at UTF-16 offset ``at`` of the browser's live text."""
    args = f"{json.dumps(live_id)},{at},{json.dumps(delta, ensure_ascii=False)}"
    return rx.call_script(f"window.__ventLive?.add({args})")


def text_events(live_id: str, before: str, after: str) -> list[Any]:
    """What to send so the browser goes from showing ``before`` to ``after``: one small event.

    Returns:
        ``[]`` when nothing changed; an ``add`` when ``after`` extends ``before`` (the
        streaming case); else a ``put`` of the whole text.
    """
    if after == before:
        return []
    if before and after.startswith(before):
        return [add_text(live_id, utf16_len(before), after[len(before) :])]
    return [put_text(live_id, after)]


def shown_text(live_id: Var[str]) -> Var[str]:
    """The browser's live text when it belongs to the answer ``live_id``, else ``""`` (for rendering)."""
    value = LIVE_TEXT.value
    return Var(
        _js_expr=f'((({value})?.id === {live_id}) ? ({value}).text : "")',
        _var_data=VarData.merge(value._get_all_var_data(), live_id._get_all_var_data()),
    ).to(str)
