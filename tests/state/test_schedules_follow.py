"""When the schedules page re-reads its list (``follow_due``): a running run, a passed next-run time."""

from __future__ import annotations

from datetime import UTC, datetime

from ventapp.state.schedules_follow import FIRE_GRACE_S, RUNNING_EVERY_S, follow_due, tab_gone


def test_a_running_run_is_re_read_soon() -> None:
    assert follow_due(1000.0, True, [None]) == 1000.0 + RUNNING_EVERY_S


def test_the_earliest_next_run_is_re_read_just_after_it_passes() -> None:
    """Tester: a ``* * * * *`` schedule kept a past 下次运行 on a page left open for 65 s."""
    soon, later = datetime(2026, 12, 1, 8, 0, tzinfo=UTC), datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    assert follow_due(0.0, False, [later, None, soon]) == soon.timestamp() + FIRE_GRACE_S


def test_nothing_to_follow() -> None:
    assert follow_due(1000.0, False, [None]) == 0.0


def test_outside_a_running_app_no_tab_counts_as_gone() -> None:
    assert not tab_gone("any-token")
