"""The settings page (route ``/settings``): the model and its agent, the thinking switch, the
user's preferences and remembered approvals.

DOM hooks: ``#settings-model``, ``#thinking-select``, ``#preferences-form`` (``textarea[name=preferences]``),
``#rules-list`` with one ``.rule-row`` per rule and its ``.rule-revoke`` button.
"""

from __future__ import annotations

import reflex as rx

from ventapp.agent.thinking import LEVELS
from ventapp.agent.turn_context import PREFERENCES_MAX_CHARS
from ventapp.pages.components.header import page_bar
from ventapp.pages.components.lang import t
from ventapp.pages.components.model_controls import route_item
from ventapp.pages.components.page_frame import page_frame
from ventapp.pages.usage import CARD_STYLE
from ventapp.state.auth_state import AuthState, KeyView
from ventapp.state.settings_state import RuleView, SettingsState
from ventapp.state.ui_identity import verified_mode

THINKING_LEVELS = tuple(dict.fromkeys(level for levels in LEVELS.values() for level in levels))
"""Every thinking level any control offers (each has a ``settings.thinking_level.*`` label)."""


def _top_bar() -> rx.Component:
    return page_bar("settings", t("settings.title"), SettingsState.user_name, SettingsState.relocalise)


def _fact(
    label: rx.Var[str] | str, value: rx.Var[str] | str | None, names: rx.Var[str] | str | None = None
) -> rx.Component:
    """One fact; ``names`` are the raw identifiers behind ``value`` (or the fact itself when it has
    no words for people, e.g. middleware classes), small and grey: for operators."""
    shown = rx.text(value, size="2", style={"word_break": "break-word"})
    if value is None:
        shown = rx.text(
            names, size="1", color_scheme="gray", class_name="fact-ids", style={"word_break": "break-word"}
        )
    elif names is not None:
        shown = rx.vstack(
            shown,
            rx.text(
                names,
                size="1",
                color_scheme="gray",
                class_name="fact-ids",
                style={"word_break": "break-word"},
            ),
            spacing="1",
        )
    return rx.data_list.item(rx.data_list.label(label), rx.data_list.value(shown))


def _thinking_item(level: rx.Var[str]) -> rx.Component:
    """A thinking level by its catalogue label (``默认/关闭/低/中/高``), its value the API's name."""
    labels = [(name, t(f"settings.thinking_level.{name}")) for name in THINKING_LEVELS]
    return rx.select.item(rx.match(level, *labels, level), value=level)


def _route_choice() -> rx.Component:
    """Which route the card shows and the thinking switch sets (with ``MODELS``), and, for anyone
    but an operator, why the switch is disabled."""
    return rx.fragment(
        rx.cond(
            SettingsState.route_names.length() > 1,
            rx.hstack(
                rx.text(t("settings.route"), size="2", weight="medium"),
                rx.select.root(
                    rx.select.trigger(id="settings-route-select", aria_label=t("settings.route")),
                    rx.select.content(
                        # As the chat's picker lists them: 默认模型 for the main one, unpriced ones marked.
                        rx.foreach(SettingsState.route_options, route_item)
                    ),
                    value=SettingsState.thinking_route,
                    on_change=SettingsState.pick_route,
                    size="2",
                ),
                align="center",
                spacing="3",
            ),
        ),
        rx.cond(
            SettingsState.switch_reason != "",
            rx.text(SettingsState.switch_reason, size="2", color_scheme="gray", id="thinking-operators-only"),
        ),
    )


def _model_card() -> rx.Component:
    model = SettingsState.model
    return rx.vstack(
        rx.heading(t("settings.model"), size="4"),
        rx.data_list.root(
            _fact(t("settings.route"), model.route),
            _fact(t("settings.provider"), model.provider),
            _fact(t("settings.model_name"), model.model),
            _fact(t("settings.endpoint"), model.base_url),
            _fact(t("settings.window"), model.window),
            _fact(t("settings.tools"), model.tools, model.tool_ids),
            _fact(t("settings.mcp"), model.mcp),
            _fact(t("settings.subagents"), model.subagents, model.subagent_ids),
            _fact(t("settings.skills"), model.skills),
            _fact(t("settings.middleware"), None, model.middleware),
            size="2",
        ),
        _route_choice(),
        rx.hstack(
            rx.text(t("settings.thinking"), size="2", weight="medium"),
            rx.select.root(
                rx.select.trigger(id="thinking-select", aria_label=t("settings.thinking")),
                rx.select.content(rx.foreach(SettingsState.thinking_levels, _thinking_item)),
                value=SettingsState.thinking_level,
                on_change=SettingsState.set_thinking,
                disabled=~SettingsState.may_switch,
                size="2",
            ),
            align="center",
            spacing="3",
        ),
        rx.text(t("settings.thinking_help"), size="1", color_scheme="gray"),
        rx.cond(
            SettingsState.thinking_note != "",
            rx.text(SettingsState.thinking_note, size="2", id="thinking-note"),
        ),
        id="settings-model",
        spacing="3",
        style=CARD_STYLE,
    )


def _preferences_card() -> rx.Component:
    return rx.vstack(
        rx.heading(t("settings.preferences"), size="4"),
        rx.text(
            t("settings.preferences_help", limit=f"{PREFERENCES_MAX_CHARS:,}"), size="1", color_scheme="gray"
        ),
        rx.form(
            rx.vstack(
                rx.text_area(
                    name="preferences",
                    default_value=SettingsState.preferences,
                    key=SettingsState.preferences,
                    placeholder=t("settings.preferences_placeholder"),
                    rows="4",
                    width="100%",
                ),
                rx.hstack(
                    rx.button(t("settings.save"), type="submit", id="preferences-save"),
                    rx.button(
                        t("settings.clear"),
                        type="button",
                        variant="soft",
                        color_scheme="gray",
                        on_click=SettingsState.clear_preferences,
                        id="preferences-clear",
                    ),
                    spacing="2",
                ),
                width="100%",
            ),
            on_submit=SettingsState.save_preferences,
            id="preferences-form",
            width="100%",
        ),
        rx.cond(
            SettingsState.preferences_note != "",
            rx.text(
                SettingsState.preferences_note,
                size="2",
                id="preferences-note",
                color_scheme=rx.cond(SettingsState.preferences_failed, "red", "gray"),
                role=rx.cond(SettingsState.preferences_failed, "alert", "status"),
            ),
        ),
        spacing="3",
        style=CARD_STYLE,
    )


def _rule_row(rule: rx.Var[RuleView]) -> rx.Component:
    return rx.hstack(
        rx.text(rule.label, size="2", weight="medium", class_name="rule-tool"),
        rx.code(rule.tool, size="1", variant="ghost", color_scheme="gray"),
        rx.badge(
            rule.scope_label, variant="soft", color_scheme=rx.cond(rule.scope == "always", "amber", "gray")
        ),
        rx.text(rule.created, size="1", color_scheme="gray"),
        rx.spacer(),
        rx.button(
            t("settings.revoke"),
            size="1",
            variant="soft",
            color_scheme="red",
            on_click=SettingsState.revoke(rule.id),
            class_name="rule-revoke",
        ),
        align="center",
        width="100%",
        class_name="rule-row",
    )


def _rules_card() -> rx.Component:
    return rx.vstack(
        rx.heading(t("settings.rules"), size="4"),
        rx.text(t("settings.rules_help"), size="1", color_scheme="gray"),
        rx.cond(
            SettingsState.rules.length() > 0,
            rx.vstack(rx.foreach(SettingsState.rules, _rule_row), width="100%", spacing="2", id="rules-list"),
            rx.text(t("settings.rules_empty"), size="2", color_scheme="gray", id="rules-empty"),
        ),
        spacing="3",
        style=CARD_STYLE,
    )


def _key_row(key: KeyView) -> rx.Component:
    return rx.hstack(
        rx.text(rx.cond(key.name != "", key.name, key.prefix), size="2", weight="medium"),
        rx.text(key.prefix, " · ", key.created, size="1", color_scheme="gray"),
        rx.spacer(),
        rx.cond(
            key.active,
            rx.button(
                t("auth.key_revoke"),
                size="1",
                variant="soft",
                color_scheme="red",
                on_click=AuthState.revoke_key(key.id),
                class_name="key-revoke",
            ),
            rx.badge(t("auth.key_revoked"), color_scheme="gray"),
        ),
        width="100%",
        align="center",
        class_name="key-row",
    )


def _keys_card() -> rx.Component:
    """Personal API keys (``AUTH_MODE`` local/header); in ``none`` mode, the plain warning instead."""
    if not verified_mode():
        return rx.callout(
            t("auth.unverified"), icon="shield_alert", color_scheme="amber", id="unverified-note"
        )
    return rx.vstack(
        rx.heading(t("auth.keys"), size="4"),
        rx.text(t("auth.keys_help"), size="1", color_scheme="gray"),
        rx.cond(
            AuthState.new_key != "",
            rx.vstack(
                rx.text(t("auth.key_created"), size="2"),
                rx.code(AuthState.new_key, id="new-key", style={"word_break": "break-all"}),
                spacing="1",
                width="100%",
            ),
        ),
        rx.form(
            rx.hstack(
                rx.input(
                    name="name", placeholder=t("auth.key_name"), aria_label=t("auth.key_name"), max_length=100
                ),
                rx.button(t("auth.key_create"), type="submit", id="key-create"),
            ),
            on_submit=AuthState.create_key,
            reset_on_submit=True,
        ),
        rx.cond(AuthState.keys_note != "", rx.text(AuthState.keys_note, size="1", color_scheme="red")),
        rx.cond(
            AuthState.keys.length() > 0,
            rx.vstack(rx.foreach(AuthState.keys, _key_row), width="100%", spacing="2", id="keys-list"),
            rx.text(t("auth.keys_empty"), size="2", color_scheme="gray"),
        ),
        spacing="3",
        style=CARD_STYLE,
        id="keys-card",
    )


def settings_page() -> rx.Component:
    """The whole settings screen; ``on_mount`` reads the model facts and the user's settings."""
    return page_frame(
        _top_bar(),
        rx.cond(
            SettingsState.problem != "",
            rx.callout(SettingsState.problem, icon="info", color_scheme="amber", id="settings-problem"),
            rx.vstack(
                _model_card(), _preferences_card(), _rules_card(), _keys_card(), spacing="4", width="100%"
            ),
        ),
        on_mount=[AuthState.check_login, SettingsState.load_page, AuthState.load_keys],
    )
