"""Our middleware implements both hooks (pitfall 4): plan mode changes the prompt only in plan mode,
the time middleware gives every model call its own current time."""

from __future__ import annotations

import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent import middleware
from ventapp.agent.agent_factory import build_agent
from ventapp.agent.middleware import DynamicTimeMiddleware, PlanModeMiddleware
from ventapp.agent.model_factory import build_model
from ventapp.agent.prompts import PLAN_MODE_PROMPT
from ventapp.config import load_settings


def test_both_sync_and_async_hooks_are_implemented() -> None:
    """Pitfall 4: a sync-only wrap_model_call raises NotImplementedError under astream."""
    assert PlanModeMiddleware.wrap_model_call is not AgentMiddleware.wrap_model_call
    assert PlanModeMiddleware.awrap_model_call is not AgentMiddleware.awrap_model_call


def test_prompt_untouched_outside_plan_mode() -> None:
    request = ModelRequest(model=None, messages=[], system_message=SystemMessage(content="base"))  # type: ignore[arg-type]
    seen: list[ModelRequest] = []
    PlanModeMiddleware().wrap_model_call(request, lambda r: seen.append(r) or "ok")  # type: ignore[arg-type,func-returns-value]
    assert seen[0].system_message is not None and seen[0].system_message.text == "base"
    assert PLAN_MODE_PROMPT not in seen[0].system_message.text


def test_time_middleware_implements_both_hooks() -> None:
    """Pitfall 4's own example: DynamicTimeMiddleware must run under ``astream``."""
    assert DynamicTimeMiddleware.wrap_model_call is not AgentMiddleware.wrap_model_call
    assert DynamicTimeMiddleware.awrap_model_call is not AgentMiddleware.awrap_model_call


def test_time_note_is_beijing_time_whatever_the_host_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        note = DynamicTimeMiddleware(clock=lambda: datetime(2026, 12, 1, 1, 0, tzinfo=UTC)).time_note()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert note == "Current time: 2026-12-01 09:00 (Asia/Shanghai, UTC+08:00)."


async def test_every_model_call_sees_the_time_of_that_call_under_astream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two model calls of one run (a tool call, then the answer) each carry their own time."""
    ticks = iter([datetime(2026, 12, 1, 0, 5, tzinfo=UTC), datetime(2026, 12, 1, 0, 7, tzinfo=UTC)])
    monkeypatch.setattr(middleware, "_utc_now", lambda: next(ticks))
    with ScriptedServer() as llm:
        llm.push(
            {"tool_calls": [{"name": "calculate", "arguments": {"expression": "1+1"}}]},
            {"content": "It is 2."},
        )
        settings = load_settings(
            {"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "x"}
        )
        agent = build_agent(build_model(settings), InMemorySaver(), workspaces_dir=Path(tempfile.mkdtemp()))
        config = {"configurable": {"thread_id": "t1", "user_name": "alice"}}
        async for _ in agent.astream({"messages": [{"role": "user", "content": "1+1?"}]}, config=config):
            pass
        systems = [str(request["messages"][0]["content"]) for request in llm.requests()]
    assert len(systems) == 2
    assert "Current time: 2026-12-01 08:05 (Asia/Shanghai, UTC+08:00)." in systems[0]
    assert "Current time: 2026-12-01 08:07 (Asia/Shanghai, UTC+08:00)." in systems[1]
    assert "08:07" not in systems[0], "each call carries the time of that call, not of the session"


async def test_the_model_is_asked_to_answer_in_the_ui_language() -> None:
    """A turn from the Chinese UI carries the note (the scripted model then answers in Chinese), one from
    the English UI answers "你好" in English; an API turn (no ``ui_lang``) carries none, and the
    scripted model then follows the user's own words, as a real model does."""
    with ScriptedServer() as llm:
        settings = load_settings(
            {"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "x"}
        )
        agent = build_agent(build_model(settings), InMemorySaver(), workspaces_dir=Path(tempfile.mkdtemp()))
        answers = []
        for thread, extra in (
            ("zh", {middleware.UI_LANG_KEY: "zh-CN"}),
            ("api", {}),
            ("en", {middleware.UI_LANG_KEY: "en"}),
        ):
            config = {"configurable": {"thread_id": thread, "user_name": "alice", **extra}}
            result = await agent.ainvoke({"messages": [{"role": "user", "content": "你好"}]}, config=config)
            answers.append(result["messages"][-1].text)
        systems = [str(request["messages"][0]["content"]) for request in llm.requests()]
    assert middleware.LANGUAGE_NOTES["zh-CN"] in systems[0]
    assert "Interface language" not in systems[1]
    assert answers[0].startswith("你好！我是脚本演示模型"), answers[0]
    assert answers[1].startswith("你好！我是脚本演示模型"), answers[1]
    assert answers[2].startswith("Hello! I am the scripted demo model"), answers[2]


def test_tools_see_the_turns_ui_language() -> None:
    """The figures a tool draws follow the UI language: the agent installs the tools' resolver."""
    from langchain_core.runnables.config import var_child_runnable_config

    from ventapp.tools import run_language

    settings = load_settings(
        {"DEEP_AGENT_ENV_PRIORITY": "none", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"}
    )
    build_agent(build_model(settings), InMemorySaver(), workspaces_dir=Path(tempfile.mkdtemp()))
    for configurable, expected in (
        ({middleware.UI_LANG_KEY: "en"}, "en"),
        ({}, "zh-CN"),
        ({middleware.WORDS_LANG_KEY: "en"}, "en"),  # an API request's Accept-Language, no UI
        ({middleware.UI_LANG_KEY: "zh-CN", middleware.WORDS_LANG_KEY: "en"}, "en"),
    ):
        token = var_child_runnable_config.set({"configurable": configurable})
        try:
            assert run_language.run_language() == expected
        finally:
            var_child_runnable_config.reset(token)
    assert run_language.run_language() == "zh-CN", "outside a run"
