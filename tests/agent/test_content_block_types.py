"""langchain-core's block-type list is derived once per process, not per block per model call."""

from __future__ import annotations

import typing

import pytest
from langchain_core.messages import content

from ventapp.agent import content_block_types


def test_the_block_types_are_derived_once_and_answer_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    original = getattr(content, "_get_data_content_block_types", None)
    assert original is not None, "langchain-core renamed it: see ventapp/agent/content_block_types.py"
    expected = original.__wrapped__() if hasattr(original, "__wrapped__") else original()
    assert "image" in expected and "file" in expected
    monkeypatch.setattr(
        content, "_get_data_content_block_types", original.__dict__.get("__wrapped__", original)
    )

    derived = 0
    real_hints = typing.get_type_hints

    def counting_hints(*args: object, **kwargs: object) -> object:
        nonlocal derived
        derived += 1
        return real_hints(*args, **kwargs)

    monkeypatch.setattr(content, "get_type_hints", counting_hints)
    assert content.is_data_content_block({"type": "image", "url": "https://example.com/a.png"})
    assert derived > 0, "without the memo every call derives the list from type hints"

    assert content_block_types.install() and content_block_types.install()  # idempotent
    derived = 0
    for _ in range(3):
        assert content.is_data_content_block({"type": "image", "url": "https://example.com/a.png"})
        assert not content.is_data_content_block({"type": "text", "text": "风量"})
    assert derived <= len(typing.get_args(content.DataContentBlock)), "derived once, then remembered"
    assert content._get_data_content_block_types() == expected


def test_install_says_so_when_the_function_is_gone(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delattr(content, "_get_data_content_block_types")
    assert content_block_types.install() is False
    assert "_get_data_content_block_types" in caplog.text
