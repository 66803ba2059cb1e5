"""The approval card's buttons, compiled (no browser): which one is red."""

from __future__ import annotations

from ventapp.pages.components.interrupt_card import _tool_approval


def _button_props(compiled: str, element: str) -> str:
    """The props of the ``RadixThemesButton`` whose id or class is ``element``, as compiled."""
    at = compiled.index(f'"{element}"')
    start = compiled.rindex("jsx(RadixThemesButton,{", 0, at)
    depth = 0
    for end, char in enumerate(
        compiled[start + len("jsx(RadixThemesButton,") :], start + len("jsx(RadixThemesButton,")
    ):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return compiled[start : end + 1]
    raise AssertionError(f"{element}'s props do not close")


def test_the_destructive_reject_is_red_and_its_undo_neutral() -> None:
    """Tester #10 (2 Dec, 31_reject_dialog): after 拒绝… the undo "撤销拒绝" was red and the button that
    sends the rejection green like 批准."""
    compiled = str(_tool_approval())
    toggle = _button_props(compiled, "reject-call")
    assert (
        'color:((call_rx_state_?.["mode"]?.valueOf?.() === "reject"?.valueOf?.()) ? "gray" : "red")' in toggle
    )
    submit = _button_props(compiled, "approve-all")
    assert '?.["submit_icon"]?.valueOf?.() === "ban"?.valueOf?.()) ? "red" : "teal")' in submit
