"""The settings page's markup (``ventapp.pages.settings``), compiled to the JSX the browser runs."""

from __future__ import annotations

from ventapp.pages.settings import _preferences_card


def test_a_preferences_refusal_is_styled_as_an_error() -> None:
    """Tester: "偏好最多 4000 个字符" read like the "saved" confirmation, not as an error."""
    jsx = str(_preferences_card())
    note = jsx.split('id:"preferences-note"', 1)[0].rsplit("jsx(RadixThemesText,", 1)[1]
    assert 'preferences_failed_rx_state_ ? "red"' in note
    assert (
        'role:(reflex___state____state__ventapp___state___settings_state____settings_state.preferences_failed_rx_state_ ? "alert"'
        in jsx
    )


def test_the_route_select_names_the_main_route_as_the_chat_picker_does() -> None:
    """Tester: the settings page listed the raw ``default`` where the chat's picker says 默认模型."""
    from ventapp.pages.settings import _route_choice

    select = str(_route_choice()).split('id:"settings-route-select"', 1)[1]
    assert '"\\u9ed8\\u8ba4\\u6a21\\u578b"' in select or "默认模型" in select
    assert "Default model" in select
