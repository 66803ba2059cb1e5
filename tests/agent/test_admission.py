"""The run gate and the single-process guard (invariant 2)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ventapp.agent.admission import SPLIT_STATE, GateFull, ProcessGuard, RunGate


def test_gate_limits_total_and_per_user() -> None:
    gate = RunGate(max_total=3, max_per_user=2)
    a1, a2 = gate.acquire("a"), gate.acquire("a")
    with pytest.raises(GateFull) as per_user:
        gate.acquire("a")
    assert per_user.value.scope == "user"
    gate.acquire("b")
    with pytest.raises(GateFull) as total:
        gate.acquire("c")
    assert total.value.scope == "process" and total.value.retry_after > 0
    a1.release()
    a1.release()  # idempotent: a double release must not free a second slot
    assert gate.in_flight == 2 and gate.user_in_flight("a") == 1
    gate.acquire("c")
    a2.release()
    assert gate.user_in_flight("a") == 0


def test_second_process_on_the_same_data_dir_is_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = ProcessGuard(tmp_path), ProcessGuard(tmp_path)
    assert first.acquire() is True
    with caplog.at_level(logging.WARNING, logger="ventapp.agent.admission"):
        assert second.acquire() is False
    message = caplog.records[-1].getMessage()
    assert "workers=1" in message and all(piece.split(" (")[0] in message for piece in SPLIT_STATE)
    first.release()
    second.release()
    assert ProcessGuard(tmp_path).acquire() is True
