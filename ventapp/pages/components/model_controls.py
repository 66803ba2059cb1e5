"""The chat header's model controls, kept apart from ``header.py``: settings link, route picker, banner.

DOM hooks: ``#settings-link`` (to ``/settings``), ``#route-picker`` (only when ``MODELS`` adds
routes), ``#endpoint-banner`` (only while the main model's endpoint does not answer).
"""

from __future__ import annotations

import reflex as rx

from ventapp.model_config import DEFAULT_ROUTE
from ventapp.pages.components.lang import t
from ventapp.state.model_state import ModelState, RouteOption


def settings_link() -> rx.Component:
    """To the settings page: model info, thinking level, preferences, approval rules."""
    return rx.link(
        rx.icon_button(
            rx.icon("settings", size=16), variant="ghost", color_scheme="gray", aria_label=t("settings.title")
        ),
        href="/settings",
        id="settings-link",
        title=t("settings.link"),
    )


def route_item(option: rx.Var[RouteOption]) -> rx.Component:
    """A route by the name people read (the main one is 默认模型; the value stays the API's name); one
    whose model has no price (``BILLING_ALLOW_UNPRICED=0``) is shown but cannot be chosen, saying why
    (its runs would be refused with 503 ``model_unpriced``). The chat's picker and the settings page's
    route select both list routes with it."""
    name = rx.cond(option.name == DEFAULT_ROUTE, t("model.route_default"), option.name)
    return rx.select.item(
        rx.cond(option.unpriced, name + " · " + t("model.route_unpriced"), name),
        value=option.name,
        disabled=option.unpriced,
        title=rx.cond(option.unpriced, t("model.route_unpriced_why"), option.model),
        class_name=rx.cond(option.unpriced, "route-option route-unpriced", "route-option"),
    )


def route_picker() -> rx.Component:
    """Which model route this conversation runs on (the session keeps the choice)."""
    return rx.cond(
        ModelState.has_choice,
        rx.select.root(
            rx.select.trigger(
                id="route-picker", variant="soft", aria_label=t("model.picker"), title=t("model.picker")
            ),
            rx.select.content(rx.foreach(ModelState.options, route_item)),
            value=ModelState.route,
            on_change=ModelState.choose,
            size="1",
        ),
    )


def endpoint_banner() -> rx.Component:
    """A warning across the chat while the model endpoint is down (read when the page opens)."""
    return rx.fragment(
        rx.cond(
            ModelState.endpoint_down,
            rx.callout.root(
                rx.callout.icon(rx.icon("triangle_alert")),
                rx.box(
                    rx.callout.text(t("model.endpoint_down")),
                    # The probe's sentence is the operator's (English, naming the URL): under 详情.
                    rx.el.details(
                        rx.el.summary(
                            t("error.details"), cursor="pointer", class_name="error-details-toggle"
                        ),
                        rx.text(ModelState.endpoint_reason, size="1", class_name="endpoint-reason"),
                        margin_top="0.25rem",
                    ),
                ),
                color_scheme="red",
                size="1",
                id="endpoint-banner",
                role="alert",
                width="100%",
            ),
        ),
        on_mount=ModelState.refresh,
    )
