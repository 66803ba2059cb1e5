"""Enter sends a message box's form, Shift+Enter adds a line: the chat box and the edit box alike."""

from __future__ import annotations

import json

import reflex as rx


def enter_sends(submit_selector: str) -> rx.Var:
    """The ``onKeyDown`` of a textarea whose Enter submits its form, as its submit button would.

    Never while an IME is composing (Chinese input confirms candidates with Enter: ``isComposing``,
    and ``keyCode`` 229 where a browser reports the key before the composition), never while the
    form's button (``submit_selector``, e.g. ``"#send"``) is missing or disabled (the chat box's
    Stop replaces Send while a run streams: the text stays in the box), never for blank text.
    """
    return rx.Var(
        f"""(e) => {{
  if (e.key !== "Enter" || e.shiftKey || e.nativeEvent.isComposing || e.keyCode === 229) return;
  e.preventDefault();
  const form = e.target.form;
  const send = form ? form.querySelector({json.dumps(submit_selector)}) : null;
  if (!form || !send || send.disabled || e.target.value.trim() === "") return;
  form.requestSubmit();
}}"""
    )
