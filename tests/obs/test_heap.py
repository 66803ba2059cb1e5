"""The start-up heap leaves the collector's full passes (issue 18, ``ventapp.obs.heap``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from ventapp.obs.heap import freeze_start_up_heap


@pytest.fixture
def unfrozen_after() -> Iterator[None]:
    yield
    gc.unfreeze()  # the rest of the test session collects as before


def test_objects_alive_at_start_up_are_no_longer_walked_by_the_collector(unfrozen_after: None) -> None:
    long_lived = {"schemas": [["airway", 1.0]]}
    assert any(obj is long_lived for obj in gc.get_objects())

    frozen = freeze_start_up_heap()

    assert frozen == gc.get_freeze_count() and frozen > 0
    assert not any(obj is long_lived for obj in gc.get_objects())  # permanent generation
    later = {"answer": ["token"]}
    assert any(obj is later for obj in gc.get_objects())  # what comes after is collected as usual
