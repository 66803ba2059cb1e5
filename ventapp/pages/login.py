"""The login page (``/login``): the form in ``AUTH_MODE=local``; with ``header`` a sentence that the
proxy signs people in (``#login-off``), with ``none`` that there are no accounts.

A plain HTML form posted to ``POST /api/auth/login/form``: the server checks the password and
answers with the HTTP-only session cookie and a redirect, so no script ever holds the token or
the password. A refused login comes back here with ``?error=<code>`` and the name typed before
already in its field; a page whose login ended
sends the browser here with ``?reason=ended`` (``#login-notice`` says so) and ``next``, the page
and its query, to return to.
"""

from __future__ import annotations

import reflex as rx

from ventapp.pages.components.header import color_mode_button
from ventapp.pages.components.lang import lang_switch, t
from ventapp.pages.components.page_frame import refusal_callout, starting_notice
from ventapp.state.auth_state import AuthState
from ventapp.state.ui_identity import LOGIN_FORM_ID, LOGIN_USER_ID, submit_login_form


def _form() -> rx.Component:
    """The user name and password, posted natively to the API (``AUTH_MODE=local``)."""
    return rx.el.form(
        rx.vstack(
            rx.el.label(t("auth.user_name"), html_for="login-user"),
            rx.input(
                id=LOGIN_USER_ID,
                name="user_name",
                auto_complete="username",
                required=True,
                width="100%",
            ),
            rx.el.label(t("auth.password"), html_for="login-password"),
            rx.input(
                id="login-password",
                name="password",
                type="password",
                auto_complete="current-password",
                required=True,
                width="100%",
            ),
            rx.el.input(type="hidden", name="next", value=AuthState.next_path),
            rx.button(t("auth.login"), type="submit", id="login-submit", width="100%"),
            spacing="2",
            width="100%",
        ),
        action="/api/auth/login/form",
        method="post",
        id=LOGIN_FORM_ID,
        # Reflex's forms always cancel the browser's own submit; send it natively, so
        # the server's answer (cookie + redirect) reaches the browser and no script. The name
        # is kept in this tab: a refused login puts it back (only the password is typed again).
        on_submit=rx.call_script(submit_login_form()),
        width="100%",
    )


def _no_form(sentence: rx.Var[str]) -> rx.Component:
    """No accounts here to log in to: say how sign-in works, and lead back to the app."""
    return rx.vstack(
        rx.callout(sentence, icon="info", color_scheme="gray", id="login-off"),
        rx.link(t("auth.back_to_app"), href="/", id="login-home"),
        spacing="3",
        width="100%",
    )


def login_page() -> rx.Component:
    """The login card under the header's language and colour-mode switches; ``on_mount`` reads the
    error and the page to return to."""
    switches = rx.hstack(
        lang_switch(AuthState.relocalise_login),
        color_mode_button(),
        position="absolute",
        top="0.75rem",
        right="1rem",
        spacing="3",
        align="center",
        class_name="login-switches",
    )
    return rx.center(
        switches,
        rx.card(
            rx.vstack(
                rx.heading(t("auth.login_title"), size="5", as_="h1"),
                starting_notice(),
                rx.cond(
                    AuthState.login_notice != "",
                    rx.callout(AuthState.login_notice, icon="info", color_scheme="blue", id="login-notice"),
                ),
                rx.cond(
                    AuthState.login_error != "",
                    refusal_callout(AuthState.login_error, id="login-error"),
                ),
                rx.match(
                    AuthState.login_mode,
                    ("local", _form()),
                    ("header", _no_form(t("auth.signin_by_proxy"))),
                    _no_form(t("auth.error.auth_off")),
                ),
                spacing="4",
                width="100%",
            ),
            width="100%",
            max_width="24rem",
        ),
        min_height="100dvh",
        padding="1rem",
        position="relative",
        background=rx.color("gray", 1),
        on_mount=AuthState.load_login,
    )
