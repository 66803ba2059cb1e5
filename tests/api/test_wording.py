"""Approval reasons, the opening status line and a run's fixed errors worded per request language
(``ventapp.api.wording``): offline, and one run without a model over real HTTP."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.api.sse_client import read_frames
from tests.support import ApiServer, app_env, patched_env
from ventapp.agent import events as ev
from ventapp.agent.errors import FIXED_FAILURES
from ventapp.agent.interrupts import approval_reason, to_event
from ventapp.api.wording import needs_wording, worded
from ventapp.i18n import t
from ventapp.tools.registry import load_builtin_tools


def _paused_batch() -> ev.Interrupt:
    value = {
        "action_requests": [
            {"name": "calculate", "args": {"expression": "1"}, "description": approval_reason("calculate")},
            {
                "name": "calculate",
                "args": {"expression": "2"},
                "description": "Tool execution requires approval",
            },
            {"name": "calculate", "args": {"expression": "3"}, "description": "Ask the shift lead first."},
        ],
        "review_configs": [],
    }
    return to_event(type("Pending", (), {"id": "tok", "value": value})())


def test_coded_reasons_are_worded_in_one_language_and_a_reason_of_its_own_is_kept() -> None:
    load_builtin_tools()  # the labels
    event = _paused_batch()
    zh = worded(event, "zh-CN")
    en = worded(event, "en")
    assert isinstance(zh, ev.Interrupt) and isinstance(en, ev.Interrupt)
    assert zh.tool_approval is not None and en.tool_approval is not None
    assert [r["reason"] for r in zh.tool_approval["requests"]] == [
        "计算器需要你批准后才会运行。",
        "计算器需要你批准后才会运行。",
        "Ask the shift lead first.",
    ]
    assert en.tool_approval["reason"] == "Calculator needs your approval before it runs."
    assert [r["reason_code"] for r in en.tool_approval["requests"]] == ["needs_approval", "default", ""]
    assert [r["label"] for r in en.tool_approval["requests"]] == ["Calculator"] * 3, "every reason code"
    assert en.tool_approval["label"] == "Calculator" and zh.tool_approval["label"] == "计算器"
    assert event.tool_approval is not None and "(calculate)" in event.tool_approval["reason"], (
        "not changed in place"
    )


def test_agent_frames_name_the_agent_in_the_requests_language_and_keep_cn_agent() -> None:
    main = ev.AgentDone(agent="ventagent", cn_agent="通风智能体", duration_ms=5)
    sub = ev.AgentStart(agent="researcher", cn_agent="资料检索员", agent_id="call-1")
    failed = ev.AgentError(agent="general-purpose", cn_agent="通用子智能体", message="boom", duration_ms=1)
    assert all(needs_wording(event) for event in (main, sub, failed)), "encoded per language"
    labels = {
        lang: [worded(e, lang).to_wire()["label"] for e in (main, sub, failed)] for lang in ("en", "zh-CN")
    }
    assert labels["en"] == ["Ventilation agent", "Researcher", "General-purpose sub-agent"]
    assert labels["zh-CN"] == ["通风智能体", "资料检索员", "通用子智能体"]
    assert worded(main, "en").to_wire()["cn_agent"] == "通风智能体", "cn_agent stays Chinese"


def test_tool_frames_name_the_tool_in_the_requests_language_and_keep_cn_tool() -> None:
    """The legacy page titled a card by the raw name ("calculate") unless an approval card had
    taught it the label: ``tool_call`` and ``tool_result`` now carry ``label`` themselves."""
    load_builtin_tools()
    call = ev.ToolCall(tool="calculate", cn_tool="计算器", args={"expression": "1"}, tool_call_id="c1")
    result = ev.ToolResult(tool="calculate", cn_tool="计算器", content="1", tool_call_id="c1")
    for event in (call, result):
        assert needs_wording(event, "zh-CN") and needs_wording(event, "en"), "label, in every language"
        assert worded(event, "en").to_wire()["label"] == "Calculator"
        assert worded(event, "zh-CN").to_wire()["label"] == "计算器"
        assert worded(event, "en").to_wire()["cn_tool"] == "计算器", "cn_tool stays Chinese"
        assert event.label == "", "not changed in place"


def test_other_events_pass_through_unchanged() -> None:
    token = ev.Token(content="x")
    assert worded(token, "en") is token


# --- a run's opening line and closing error (F9) -------------------------------------------


def test_every_fixed_failure_is_worded_in_both_languages_and_its_english_is_the_runs() -> None:
    for failure, key in FIXED_FAILURES.items():
        error = ev.Error(message=failure.message, code=failure.code)
        assert needs_wording(error)
        zh, en = worded(error, "zh-CN"), worded(error, "en")
        assert isinstance(zh, ev.Error) and isinstance(en, ev.Error)
        assert en.message == failure.message == t(key, "en"), "English stays the run's own sentence"
        assert zh.message == t(key, "zh-CN") != failure.message and zh.code == failure.code
    quoted = ev.Error(message="The model server failed (HTTP 500): boom.", code="model_error")
    assert worded(quoted, "zh-CN") is quoted and not needs_wording(quoted), "a provider's words stay"


def test_a_run_without_a_model_says_so_in_the_requests_language(tmp_path: Path) -> None:
    with (
        patched_env(app_env(tmp_path, None)),
        ApiServer() as server,
        httpx.Client(base_url=server.url) as http,
    ):
        frames = {}
        for accept in (None, "en-GB,en;q=0.9"):
            with http.stream(
                "POST",
                "/api/chat",
                files={"message": (None, "hi")},
                headers={"Accept-Language": accept} if accept else {},
            ) as response:
                frames[accept] = read_frames(response)
    zh, en = frames[None], frames["en-GB,en;q=0.9"]
    assert [f["type"] for f in zh][-1] == "error" and zh[-1]["code"] == "model_unconfigured"
    assert (
        zh[-1]["message"] == t("run_error.model_unconfigured", "zh-CN")
        and "OPENAI_BASE_URL" in zh[-1]["message"]
    )
    assert next(f for f in zh if f["type"] == "thinking")["message"] == "正在思考…"
    assert en[-1]["message"].startswith("No model is configured") and en[-1]["code"] == "model_unconfigured"
    assert next(f for f in en if f["type"] == "thinking")["message"] == "Thinking…"


def test_an_executing_line_reads_in_english_for_an_english_request() -> None:
    load_builtin_tools()
    event = ev.Executing(
        message="正在调用计算器", cn_agent="通风智能体", tools=["calculate"], cn_tools=["计算器"]
    )
    en = worded(event, "en")
    assert isinstance(en, ev.Executing) and needs_wording(event)
    assert en.message == "Calling Calculator…" and en.cn_tools == ["计算器"] and en.tools == ["calculate"]
    assert worded(event, "zh-CN") is event


def test_a_frame_needs_wording_only_in_a_language_that_changes_it() -> None:
    """A frame that reads the same in the request's language keeps the run's shared encoded bytes."""
    load_builtin_tools()
    executing = ev.Executing(
        message="正在调用计算器", cn_agent="通风智能体", tools=["calculate"], cn_tools=["计算器"]
    )
    opening = ev.Thinking(message="正在思考…", cn_agent="通风智能体")
    stopped = ev.Error(
        message=next(f for f in FIXED_FAILURES if f.code == "cancelled").message, code="cancelled"
    )
    for event in (executing, opening, stopped):
        for lang in ("zh-CN", "en"):
            changed = worded(event, lang) != event
            assert needs_wording(event, lang) is changed, (event.type, lang)
        assert needs_wording(event), "changed in some language"
    assert not needs_wording(executing, "zh-CN") and needs_wording(executing, "en")
    assert needs_wording(stopped, "zh-CN") and not needs_wording(stopped, "en")
    assert needs_wording(_paused_batch(), "zh-CN") and needs_wording(_paused_batch(), "en"), "labels"
