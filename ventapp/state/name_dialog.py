"""The name dialog: who is chatting, asked on the first visit and changeable from the header.

A mixin of :class:`~ventapp.state.chat_state.ChatState`: it reads and sets that state's
``user_name``, ``lang``, ``sessions``, ``session_id`` and ``is_streaming``, and calls its
``_leave_drafts`` and ``_show_session`` when a different person takes over the tab.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from ventapp.i18n import t
from ventapp.state.chat_data import clean_user_name, load_sessions, session_url_script
from ventapp.state.ui_identity import verified_mode


def _refusal(kind: str, name: str, lang: str) -> str:
    """The dialog's sentence for a refused ``name`` (``kind``: ``typed``, ``saved`` or ``""``) in ``lang``."""
    if not kind:
        return ""
    _, problem = clean_user_name(name, lang)
    return t("name.saved_refused", lang, name=name, reason=problem) if kind == "saved" else problem


class NameDialog(rx.State, mixin=True):
    """Events of the name dialog; the name rule is the API's (:func:`clean_user_name`)."""

    name_dialog_open: bool = False
    refused_name: str = ""
    """The name the dialog last refused (``name_error_en`` / ``name_error_zh`` say why)."""
    refused_kind: str = ""
    """Whose that name was: ``""`` (nothing refused), ``typed`` (in the dialog) or ``saved`` (kept by
    this browser before the name rule existed)."""

    # Why, in both languages: the dialog shows the one of the browser's language (``LangState``),
    # so the sentence follows a switch at once, made in this tab or synced from another (the open
    # dialog covers the header; a one-language sentence stayed in the page-load language).
    @rx.var
    def name_error_en(self) -> str:
        """Why the dialog refused a name, in English (``""``: nothing refused)."""
        return _refusal(self.refused_kind, self.refused_name, "en")

    @rx.var
    def name_error_zh(self) -> str:
        """Why the dialog refused a name, in Chinese (``""``: nothing refused)."""
        return _refusal(self.refused_kind, self.refused_name, "zh-CN")

    def _refuse(self, name: str, kind: str) -> None:
        self.refused_name, self.refused_kind = name, kind

    def _recheck_saved_name(self) -> None:
        """On page load: a name this browser saved before the rule existed is normalised, or —
        when the rule refuses it (say it holds ``/``) — forgotten, and the dialog says why, with
        the rule's own sentence naming the refused character, and that its conversations wait on
        the server for an operator's ``rename-user``."""
        saved = self.user_name
        if not saved:
            return
        name, problem = clean_user_name(saved, self.lang)
        if name == saved:
            return
        self.user_name = name
        if problem:
            self._refuse(saved, "saved")

    @rx.event
    def open_name_dialog(self) -> None:
        self._refuse("", "")
        self.name_dialog_open = True

    @rx.event
    def close_name_dialog(self) -> None:
        """Close the dialog, unless no name has been saved yet (the first visit must set one)."""
        if self.user_name:
            self.name_dialog_open = False
            self._refuse("", "")

    @rx.event
    def on_name_dialog_change(self, is_open: bool) -> None:
        """Escape / outside click on the dialog."""
        if is_open:
            self.name_dialog_open = True
        elif self.user_name:
            self.name_dialog_open = False
            self._refuse("", "")

    @rx.event
    async def save_user_name(self, form_data: dict[str, Any]) -> Any:
        """Keep the typed name; a different name starts over with that person's sessions.

        Only in ``AUTH_MODE=none``: with accounts or a login proxy the name is the verified one
        (:mod:`ventapp.state.auth_state`), and an event sent by hand must not change it.
        """
        if verified_mode():
            return None
        typed = str(form_data.get("user_name") or "")
        name, problem = clean_user_name(typed, self.lang)
        if problem:
            self._refuse(typed, "typed")
            return None
        self._refuse("", "")
        self.name_dialog_open = False
        if name == self.user_name:
            return None
        if not self.is_streaming:
            await self._leave_drafts()
            self._show_session("", None)
        self.user_name = name
        self.sessions = await load_sessions(name, self.lang)
        return session_url_script(self.session_id)
