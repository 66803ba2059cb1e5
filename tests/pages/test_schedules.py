"""The schedules page's markup (``ventapp.pages.schedules``), compiled to the JSX the browser runs."""

from __future__ import annotations

from reflex.vars import Var

from ventapp.pages.schedules import _run_row
from ventapp.state.schedules_state import RunView


def _cells(jsx: str) -> list[str]:
    return jsx.split("jsx(RadixThemesTable.Cell,")[1:]


def test_a_failed_runs_reason_is_a_line_under_its_status_not_only_a_hover_title() -> None:
    """Tester: a failed scheduled run's reason was only in the status cell's hover ``title``."""
    run = Var(_js_expr="run", _var_type=RunView).guess_type()
    status = next(cell for cell in _cells(str(_run_row(run))) if "RadixThemesBadge" in cell)
    assert 'className:"schedule-run-reason"' in status
    reason = status.split('className:"schedule-run-reason"', 1)[1]
    assert reason.split(")", 1)[0].endswith('run?.["error"]'), "the reason is the line's text"
    assert 'run?.["href"]' not in status, "shown whether or not the run has a conversation to open"
