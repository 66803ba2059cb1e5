"""A late approval's frames number on after the paused part (the tester's serious finding).

The run log forgets a paused part ``RUN_LOG_TTL_S`` after it closes (1 s here, 60 s by default).
An approval given later used to number the resumed frames from 1 again, so a client reconnecting
with ``Last-Event-ID`` = the interrupt's ``seq`` got 200 and silently missed the start of the answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.api.sse_client import collapsed
from tests.api.test_hitl_api import _join, _paused, _resume
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env

TTL_S = 1.0


@pytest.fixture(scope="module")
def short_log_api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    env = {
        **app_env(tmp_path_factory.mktemp("data"), llm.base_url),
        "HITL_TOOLS": "calculate",
        "RUN_LOG_TTL_S": str(TTL_S),
    }
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def http(short_log_api: ApiServer, llm: ScriptedServer) -> Iterator[httpx.Client]:
    llm.reset()
    with httpx.Client(base_url=short_log_api.url, timeout=30) as client:
        yield client


def test_an_approval_after_the_log_forgot_the_pause_numbers_on_after_it(http: httpx.Client) -> None:
    session_id, frame = _paused(http, "please calculate 12*12")
    paused_last = frame["seq"]
    time.sleep(TTL_S * 3)  # the paused part's log has expired
    response, resumed = _resume(
        http, session_id=session_id, interrupt_token=frame["interrupt_token"], decisions=[{"type": "approve"}]
    )
    assert response.status_code == 200 and resumed[-1]["type"] == "done"
    assert resumed[0]["seq"] == paused_last + 1, [f["seq"] for f in resumed]

    status, ids, frames = _join(http, session_id, **{"Last-Event-ID": str(paused_last)})
    assert status == 200 and ids == [f["seq"] for f in frames] and ids[0] == paused_last + 1
    assert collapsed(frames) == collapsed(resumed), "every resumed frame, none skipped"
    assert frames[-1]["type"] == "done"
    status, _, _ = _join(http, session_id, **{"Last-Event-ID": "1"})
    assert status == 410, "frames of the paused part are gone: a gap, said so"
