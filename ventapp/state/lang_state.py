"""The UI language of this browser: chosen in the header, else the browser's, remembered in localStorage.

Before the page hydrates, :data:`DETECT_SCRIPT` (a ``<head>`` script) stores the browser's
preference under :data:`STORAGE_KEY` when nothing was chosen yet and sets ``<html lang>``,
so the first state the server sees already has the language and no page flashes the
other one. Components read :attr:`LangState.lang` (``ventapp.pages.components.lang``);
states that word text on the server read it with :func:`ui_lang`.
"""

from __future__ import annotations

import json
from typing import Any

import reflex as rx

from ventapp.i18n import DEFAULT_LANG, LANGS, resolve_lang

STORAGE_KEY = "ventagent_lang"

DETECT_SCRIPT = f"""(function () {{
  try {{
    var key = {json.dumps(STORAGE_KEY)};
    var lang = window.localStorage.getItem(key);
    if (lang !== "en" && lang !== "zh-CN") {{
      lang = {json.dumps(DEFAULT_LANG)};
      var tags = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || ""];
      for (var i = 0; i < tags.length; i++) {{
        var tag = String(tags[i] || "").toLowerCase();
        if (tag === "en" || tag.indexOf("en-") === 0) {{ lang = "en"; break; }}
        if (tag === "zh" || tag.indexOf("zh-") === 0) {{ lang = "zh-CN"; break; }}
      }}
      window.localStorage.setItem(key, lang);
    }}
    document.documentElement.lang = lang;
  }} catch (e) {{}}
}})();"""
"""Runs in ``<head>``: the first of the browser's languages that is English or Chinese wins; else zh-CN."""


def html_lang_script(lang: str) -> Any:
    """Set ``<html lang>`` to ``lang`` (after a switch; screen readers pick the voice from it)."""
    return rx.call_script(f"document.documentElement.lang = {json.dumps(resolve_lang(lang))}")


class LangState(rx.State):
    """The chosen language; ``""`` only before the head script ran (read as the default)."""

    lang: str = rx.LocalStorage("", name=STORAGE_KEY, sync=True)

    @rx.event
    def set_lang(self, value: str | list[str]) -> Any:
        """The header's switch: remember the choice in this browser and relabel the page."""
        value = value[0] if isinstance(value, list) and value else value
        if value not in LANGS:
            return None
        self.lang = str(value)
        return html_lang_script(self.lang)


async def ui_lang(state: rx.State) -> str:
    """The UI language of the browser ``state`` belongs to (``"zh-CN"`` | ``"en"``)."""
    lang_state = await state.get_state(LangState)
    return resolve_lang(lang_state.lang)
