"""The chat header's model controls (``ventapp.pages.components.model_controls``), compiled to JSX."""

from __future__ import annotations

import json

from ventapp.pages.components.model_controls import endpoint_banner, route_picker


def _js(text: str) -> str:
    """``text`` as the compiled page spells a string (non-ASCII as ``\\u`` escapes)."""
    return json.dumps(text)


def test_the_endpoint_banner_keeps_the_operators_english_detail_under_details() -> None:
    """Tester: the red banner read "模型服务器没有响应，新消息将会失败：http://127.0.0.1:18932/v1 is not
    reachable (ConnectError)." — the probe's English sentence inside the Chinese one."""
    jsx = str(endpoint_banner())
    assert _js("模型服务器没有响应，新消息将会失败。") in jsx
    sentence, disclosure = jsx.split('jsx("details"', 1)
    assert "endpoint_reason" not in sentence, "the reason is not in the sentence"
    assert _js("给运维人员的详情") in disclosure and "endpoint_reason" in disclosure, (
        "the reason is under 详情"
    )


def test_the_route_picker_names_the_main_route_by_the_catalogue() -> None:
    """Tester: the picker showed the API's route name ``default`` in the Chinese UI."""
    jsx = str(route_picker())
    assert _js("默认模型") in jsx and _js("Default model") in jsx
    assert 'value:option_rx_state_?.["name"]' in jsx, "the value stays the API's name"
