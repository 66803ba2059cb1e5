"""The streamed answer's text and reasoning in the browser: buffers there, fed only what is new (issue 18 item 1).

Reflex sends the whole value of every state var that changed (DESIGN.md, "UI
streaming"), so an answer kept in a state var is resent in full at every flush and its
bytes grow with the square of its length. The live answer's growing strings — its text
(:data:`TEXT`) and its reasoning (:data:`REASONING`) — therefore live in the browser, each
in a client-side variable (a React state) of one :class:`LiveBuffer`, and the server sends
them small events: ``put`` (the whole string, once per answer or after a reload) and
``add`` (what was appended since the last flush, with the offset it goes at). The bubble
renders those variables through the same components as a finished answer, and the
finished answer still arrives once, in ``messages``.

Each live answer has an id (``ChatState.live_id``); the browser shows a buffer only while
it holds that id's string, so a tab never shows a previous answer's text or reasoning. An
``add`` that does not fit (the page was reloaded and has nothing yet) is dropped; the
``put`` the reloaded page gets carries everything. Offsets count UTF-16 code units, as
JavaScript strings do.
"""

from __future__ import annotations

import json
from typing import Any

import reflex as rx
from reflex.experimental.client_state import ClientStateVar
from reflex.vars import Var, VarData

# One helper for every buffer, evaluated by Reflex's `_call_script` handler in the scope where
# `refs` is defined; `b` names the buffer's client state (its setter is `set` + the name capitalised,
# as ClientStateVar makes it; before the bubble mounts there is none and the slot is written).
_HELPER = (
    "(window.__ventLive ??= {"
    "set(b, v) {"
    " const set = refs['_client_state_set' + b[0].toUpperCase() + b.slice(1)];"
    " if (set) set(v); else refs['_client_state_' + b] = v;"
    "},"
    "put(b, id, text) { this.set(b, {id, text}); },"
    "add(b, id, at, delta) {"
    " const cur = refs['_client_state_' + b];"
    " if (!cur || cur.id !== id || cur.text.length < at) return;"
    " if (cur.text.length >= at + delta.length) return;"
    " this.set(b, {id, text: cur.text.slice(0, at) + delta});"
    "}})"
)


def utf16_len(text: str) -> int:
    """Length of ``text`` as JavaScript counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class LiveBuffer:
    """One growing string of the live answer, held by the browser as ``{id, text}``.

    Args:
        name: The client state's name (lower-case letters: it is also a JavaScript identifier).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.var = ClientStateVar.create(name, {"id": "", "text": ""})

    def put(self, live_id: str, text: str) -> Any:
        """The event that sets the browser's buffer to ``text`` (whole) for the answer ``live_id``."""
        args = f"{json.dumps(self.name)},{json.dumps(live_id)},{json.dumps(text, ensure_ascii=False)}"
        return rx.call_script(f"{_HELPER}.put({args})")

    def add(self, live_id: str, at: int, delta: str) -> Any:
        """The event that appends ``delta`` at UTF-16 offset ``at`` of the browser's buffer."""
        args = f"{json.dumps(self.name)},{json.dumps(live_id)},{at},{json.dumps(delta, ensure_ascii=False)}"
        return rx.call_script(f"window.__ventLive?.add({args})")

    def events(self, live_id: str, before: str, after: str) -> list[Any]:
        """What to send so the browser goes from showing ``before`` to ``after``: one small event.

        Returns:
            ``[]`` when nothing changed; an ``add`` when ``after`` extends ``before`` (the
            streaming case); else a ``put`` of the whole string.
        """
        if after == before:
            return []
        if before and after.startswith(before):
            return [self.add(live_id, utf16_len(before), after[len(before) :])]
        return [self.put(live_id, after)]

    def shown(self, live_id: Var[str]) -> Var[str]:
        """The browser's buffer when it belongs to the answer ``live_id``, else ``""`` (for rendering)."""
        value = self.var.value
        return Var(
            _js_expr=f'((({value})?.id === {live_id}) ? ({value}).text : "")',
            _var_data=VarData.merge(value._get_all_var_data(), live_id._get_all_var_data()),
        ).to(str)


TEXT = LiveBuffer("livetext")
"""The live answer's text (Markdown)."""
REASONING = LiveBuffer("livereasoning")
"""The live answer's reasoning (a paragraph per model call, as ``LiveAnswer.reasoning``)."""
