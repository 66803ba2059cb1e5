"""A failed tool call's ``tool_result`` carries ``message``, the reason as a person reads it in the
request's ``Accept-Language`` (the Reflex card's sentence), beside the ``content`` the model read;
the history gives it too, so a reload reads the same (API clients of the 1.5 contract)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.api.sse_client import read_frames
from tests.scripted_llm.server import ScriptedServer
from ventapp.i18n import t

EN = {"Accept-Language": "en"}
ZH = {"Accept-Language": "zh-CN"}


def _chat(
    client: httpx.Client, message: str, user: str, headers: dict[str, str]
) -> tuple[str, list[dict[str, Any]]]:
    files = {"message": (None, message), "user_name": (None, user)}
    with client.stream("POST", "/api/chat", files=files, headers=headers) as response:
        frames = read_frames(response)
    return response.headers["x-session-id"], frames


def _result(frames: list[dict[str, Any]]) -> dict[str, Any]:
    (result,) = [frame for frame in frames if frame["type"] == "tool_result"]
    return result


def _divide_by_zero(client: httpx.Client, llm: ScriptedServer, user: str, headers: dict[str, str]) -> Any:
    llm.push(
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "1/0"}}]},
        {"content": "That cannot be calculated."},
    )
    return _chat(client, "divide one by zero", user, headers)


def test_a_failed_calculation_says_its_reason_in_the_request_language(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    """A 1.5 client showed "Tool 'calculate' failed: [bad_expression] 这个算式无法计算… (division by
    zero in '1/0')": the wrapper and code are the model's, not a person's."""
    for headers, lang in ((ZH, "zh-CN"), (EN, "en")):
        session_id, frames = _divide_by_zero(client, llm, f"divider-{lang}", headers)
        result = _result(frames)
        assert result["error"] is True
        assert "Tool 'calculate' failed" in result["content"], "the model's text is kept"
        message = result["message"]
        assert message.startswith(t("tool.refused.bad_expression", lang)), message
        assert "Tool 'calculate'" not in message and "[bad_expression]" not in message
        # A reload reads the same: each stored call carries the frame's message.
        history = client.get(
            f"/api/chat/history/{session_id}", params={"user_name": f"divider-{lang}"}, headers=headers
        ).json()
        (call,) = history["messages"][-1]["tool_calls"]
        assert call["error"] is True and call["message"] == message
        assert call["content"] == result["content"]


def test_the_same_failure_reads_in_each_language_and_a_success_has_no_message(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    session_id, frames = _divide_by_zero(client, llm, "divider-both", ZH)
    history = {
        lang: client.get(
            f"/api/chat/history/{session_id}", params={"user_name": "divider-both"}, headers=headers
        ).json()["messages"][-1]["tool_calls"][0]["message"]
        for headers, lang in ((ZH, "zh-CN"), (EN, "en"))
    }
    assert history["zh-CN"] == _result(frames)["message"] == t("tool.refused.bad_expression", "zh-CN")
    # Refused in a Chinese turn, read in English: worded again in English, the detail after it (try20).
    assert history["en"] == t("tool.refused.bad_expression", "en") + " (division by zero in '1/0')"

    ok_session, ok_frames = _chat(client, "please calculate (12+8)*3", "divider-both", EN)
    ok = _result(ok_frames)
    assert ok["error"] is False and ok["content"] == "60" and ok["message"] == ""
    (call,) = client.get(
        f"/api/chat/history/{ok_session}", params={"user_name": "divider-both"}, headers=EN
    ).json()["messages"][-1]["tool_calls"]
    assert call["message"] == ""


def test_a_follower_of_the_run_gets_the_message_in_its_own_language(
    client: httpx.Client, llm: ScriptedServer
) -> None:
    """``GET /api/chat/stream`` words frames by the joiner's ``Accept-Language``, not the poster's."""
    session_id, frames = _divide_by_zero(client, llm, "divider-follower", ZH)
    with client.stream(
        "GET",
        "/api/chat/stream",
        params={"session_id": session_id, "user_name": "divider-follower", "after": 0},
        headers=EN,
    ) as joined:
        assert joined.status_code == 200, "the run just ended: its frames are still kept"
        blocks = "".join(joined.iter_text()).split("\n\n")
    # Each joined frame is "id: <seq>\ndata: {json}"; keep-alive comments start with ":".
    followed = _result([json.loads(b.split("data: ", 1)[1]) for b in blocks if "data: " in b])
    english = t("tool.refused.bad_expression", "en") + " (division by zero in '1/0')"
    assert followed["message"] == english, "worded for the follower (English)"
    assert _result(frames)["message"] == t("tool.refused.bad_expression", "zh-CN"), "for the poster"
