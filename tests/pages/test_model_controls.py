"""The chat header's model controls (``ventapp.pages.components.model_controls``), compiled to JSX."""

from __future__ import annotations

import json

from ventapp.pages.components.model_controls import endpoint_banner


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
