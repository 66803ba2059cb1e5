"""The scripted demo model's language (``tests.scripted_llm.script``): with no UI language named (the
legacy API) its own sentences follow the user's words; a failed calculation is said as a failure."""

from __future__ import annotations

from tests.scripted_llm import script


def test_without_a_ui_language_the_demo_answers_in_the_users_own_language() -> None:
    """Tester (2 Dec): a Chinese API client (no interface-language note) got English around Chinese
    reasons, e.g. "The result is 用户拒绝了这次调用。" after a refused approval."""
    tools = [{"type": "function", "function": {"name": "calculate"}}]
    call = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "calculate"}}]}
    refused = {"role": "tool", "tool_call_id": "c1", "content": "用户拒绝了这次调用。"}
    zh_user = {"role": "user", "content": "计算 1+2"}
    assert script.rule_reply({"messages": [zh_user, call, refused], "tools": tools}) == script.TextReply(
        "结果是 用户拒绝了这次调用。"
    )
    assert script.rule_reply({"messages": [{"role": "user", "content": "你好"}]}) == script.TextReply(
        "你好！我是脚本演示模型。你说：你好"
    )
    apology = script.rule_reply({"messages": [{"role": "user", "content": "计划一下"}]})
    assert apology == script.TextReply("抱歉，本次对话中没有 write_todos 这个工具。")
    en_user = {"role": "user", "content": "calculate 1+2"}
    assert script.rule_reply({"messages": [en_user, call, {**refused, "content": '{"result": 3}'}]}) == (
        script.TextReply("The result is 3.")
    )
    # The UI's note still wins over the words of the message ("long answer" tests rely on it).
    english = {"role": "system", "content": "Interface language: English (en)."}
    assert script.rule_reply(
        {"messages": [english, {"role": "user", "content": "你好"}]}
    ) == script.TextReply("Hello! I am the scripted demo model. You said: 你好")


def test_a_failed_calculation_is_said_as_a_failure_in_the_users_language() -> None:
    """Found checking the Chinese demo: "计算 1/0" answered "结果是 Tool 'calculate' failed: division by
    zero in '1/0'。" — the model-facing wrapper, called a result."""
    call = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "calculate"}}]}
    failed = {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "Tool 'calculate' failed: division by zero in '1/0'",
    }
    zh = script.rule_reply({"messages": [{"role": "user", "content": "计算 1/0"}, call, failed]})
    assert zh == script.TextReply("计算失败：division by zero in '1/0'。")
    en = script.rule_reply({"messages": [{"role": "user", "content": "calculate 1/0"}, call, failed]})
    assert en == script.TextReply("The calculation failed: division by zero in '1/0'.")
