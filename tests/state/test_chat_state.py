"""The chat UI's state: stored messages as views, and ChatState headless.

The headless tests run the real Reflex event processor through the harness in
:mod:`tests.state.chat_harness` (only the run pipeline is replaced by a fake that yields real
contract events into a real run log). The reducer and the pump are tested in ``test_live_answer``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from reflex.istate.manager.memory import StateManagerMemory
from reflex_base.event.processor import BaseStateEventProcessor

from tests.state.chat_harness import (
    SESSION,
    USAGE,
    Client,
    call,
    result,
    tokens,
)
from ventapp.agent import events as ev
from ventapp.agent.pipeline import ChatRejected
from ventapp.config import get_settings
from ventapp.state import chat_state as cs
from ventapp.state.usage_words import usage_footer
from ventapp.state.views import ChatMessageView, message_from_row

# --- views -------------------------------------------------------------------------------


def test_message_from_row_restores_tool_cards_citations_and_footer() -> None:
    row = SimpleNamespace(
        id="m1",
        role="assistant",
        content="60",
        tool_calls=[
            {
                "tool_call_id": "c1",
                "tool": "calculate",
                "cn_tool": "计算器",
                "args": {"e": "1"},
                "content": "1",
                "error": False,
            },
            {
                "tool_call_id": "c2",
                "tool": "calculate",
                "cn_tool": "计算器",
                "args": {},
                "content": None,
                "error": False,
            },
        ],
        citations=[{"title": "Fan laws", "url": "/kb/fan-laws", "snippet": "s", "score": 1.0}],
        usage=USAGE.model_dump(mode="json"),
        status="failed",
    )

    view = message_from_row(row, "en")

    assert [(t.tool_call_id, t.done) for t in view.tools] == [("c1", True), ("c2", False)]
    assert view.citations[0].url == "/kb/fan-laws"
    assert view.status == "error" and view.error == "This answer did not finish because the run failed."
    assert view.footer.startswith("1,234 tokens")
    assert message_from_row(row).error == "运行失败，这个回答没有完成。"


def test_usage_footer_marks_estimates_and_hides_empty_usage() -> None:
    estimate = ev.Usage(input_tokens=10, output_tokens=5, total_tokens=15, usage_source="estimate")

    assert usage_footer(estimate, 1500, "en") == "1.5 sec · 15 tokens (10 in · 5 out) · estimated"
    assert usage_footer(estimate, 1500) == "1.5秒 · 15 token（输入 10 · 输出 5） · 估算"
    assert usage_footer(None) == ""
    assert usage_footer({}, 200, "en") == "0.2 sec"


def test_clean_user_name() -> None:
    assert cs.clean_user_name("  Li \t Wei ") == ("Li Wei", "")
    assert cs.clean_user_name("   ")[0] == ""
    assert cs.clean_user_name("x" * 129)[1]


def test_clean_user_name_applies_the_api_rule() -> None:
    """Issue 17 item 9: the dialog keeps what the API would resolve, and refuses what it refuses."""
    assert cs.clean_user_name("Jose\u0301\u00a0") == ("Jos\u00e9", "")
    for bad in ("ali\u200bce", "al\x00ice", "alice\x1b[31m"):
        name, problem = cs.clean_user_name(bad, "en")
        assert name == "" and "invisible" in problem, bad
    assert cs.clean_user_name("x" * 129, "zh-CN")[1] == "名字最多 128 个字符。"
    assert cs.clean_user_name("ops/admin", "zh-CN") == (
        "",
        "名字只能包含文字、数字、空格和 . _ - @ + '，不能包含“/”。",
    )
    assert cs.clean_user_name("..", "en") == ("", "A name needs at least one letter or digit.")


async def test_send_streams_into_live_vars_and_commits_the_answer_once(
    client: Client, pipeline: SimpleNamespace
) -> None:
    pipeline.events = [
        ev.Thinking(message="正在思考…", cn_agent="助手"),
        call("c1", "(12+8)*3"),
        result("c1", "60"),
        *tokens(60),
        ev.Citations(items=[ev.Citation(title="Fan laws", url="/kb/fan-laws")]),
        ev.Done(duration_ms=1200, usage=USAGE),
    ]
    pipeline.pause_s = 0.005

    deltas = await client.fire("send", form_data={"message": "  please calculate (12+8)*3 "})

    assert pipeline.requests[0].message == "please calculate (12+8)*3"
    assert pipeline.requests[0].user_name == "Ann" and pipeline.requests[0].session_id is None
    # The transcript goes out twice: the user's bubble, then the finished answer. Never per token,
    # and the growing text is no state var at all: the browser gets small appends (issue 18).
    assert [i for i, d in enumerate(deltas) if "messages" in d] == [0, len(deltas) - 1]
    assert not any("live_text" in d or "_live_text" in d for d in deltas)
    appends = [script for script in client.scripts if ".add(" in script]
    assert 2 <= len(appends) <= 15
    assert all(len(script) < 200 for script in appends), "each append carries only what is new"
    assert any(d.get("live_tools") for d in deltas[1:-1])
    assert await client.shown_text() == "".join(f"w{i} " for i in range(60))
    session_shown = next(i for i, d in enumerate(deltas) if d.get("session_id") == SESSION)
    assert "sessions" in deltas[session_shown], "the sidebar lists the session once the run is admitted"
    assert session_shown < len(deltas) - 1, "…before the answer ends"

    state = await client.state()
    assert state.is_streaming is False and state.session_id == SESSION
    assert (state._live_text, state.live_tools, state.live_status) == ("", [], "")
    user, answer = state.messages
    assert (user.role, user.content) == ("user", "please calculate (12+8)*3")
    assert answer.content == "".join(f"w{i} " for i in range(60))
    assert [(t.tool_call_id, t.content) for t in answer.tools] == [("c1", "60")]
    assert answer.citations[0].url == "/kb/fan-laws"
    assert answer.status == "done" and answer.footer.startswith("1.2 sec")
    assert [s.id for s in state.sessions] == [SESSION]
    assert pipeline.runs[0].released


FIRST_THOUGHT = "Start with the fan curve. "


def thoughts(count: int, start: int = 0) -> list[ev.ThinkingToken]:
    return [ev.ThinkingToken(content=f"t{i} ") for i in range(start, start + count)]


async def test_streamed_reasoning_goes_as_appends_and_renders_as_the_finished_answer(
    client: Client, pipeline: SimpleNamespace
) -> None:
    """Issue 18: the live reasoning was a state var resent whole at every flush (bytes ~ length squared)."""
    pipeline.events = [
        ev.ThinkingToken(content=FIRST_THOUGHT),
        *thoughts(150),
        call("c1", "(12+8)*3"),
        result("c1", "60"),
        *thoughts(150, 150),  # the second model call's reasoning: a paragraph of its own
        *tokens(20),
        ev.Citations(items=[ev.Citation(title="Fan laws", url="/kb/fan-laws")]),
        ev.Done(duration_ms=1200, usage=USAGE),
    ]
    pipeline.pause_s = 0.002

    deltas = await client.fire("send", form_data={"message": "think it through"})

    assert not any("live_reasoning" in d or "_live_reasoning" in d for d in deltas)
    puts = [script for script in client.scripts if FIRST_THOUGHT in script]
    assert len(puts) == 1 and ".put(" in puts[0], "the earlier reasoning is sent once, never again per flush"
    appends = [
        script for script in client.scripts if script.startswith('window.__ventLive?.add("livereasoning"')
    ]
    assert len(appends) >= 2 and all(len(script) < 400 for script in appends), (
        "each flush sends only what is new"
    )
    expected = (
        FIRST_THOUGHT
        + "".join(f"t{i} " for i in range(150))
        + "\n\n"
        + "".join(f"t{i} " for i in range(150, 300))
    )
    answer = (await client.state()).messages[-1]
    assert answer.reasoning == expected
    assert await client.shown_reasoning() == expected, "the live block showed what the finished one shows"
    assert await client.shown_text() == answer.content


async def test_follow_up_continues_the_same_session(client: Client, pipeline: SimpleNamespace) -> None:
    pipeline.events = [ev.Token(content="hi"), ev.Done(duration_ms=1, usage=USAGE)]
    await client.fire("send", form_data={"message": "first"})
    await client.fire("send", form_data={"message": "second"})

    assert [r.session_id for r in pipeline.requests] == [None, SESSION]
    assert len((await client.state()).messages) == 4

    await client.fire("new_chat")
    await client.fire("send", form_data={"message": "third"})
    assert pipeline.requests[-1].session_id is None


async def test_rejected_run_shows_the_message_in_the_bubble(
    client: Client, pipeline: SimpleNamespace
) -> None:
    pipeline.reject = ChatRejected(409, "busy", "This session is already answering. Wait for it to finish.")

    await client.fire("send", form_data={"message": "hello"})

    state = await client.state()
    answer = state.messages[-1]
    assert answer.status == "error"
    assert answer.error == "This conversation or the server is busy answering. Try again in a moment."
    assert answer.error_detail == "This session is already answering. Wait for it to finish."
    assert state.is_streaming is False


async def test_pipeline_error_event_is_shown_in_place(client: Client, pipeline: SimpleNamespace) -> None:
    pipeline.events = [ev.Error(message="No model is configured.", code="model_unconfigured")]

    await client.fire("send", form_data={"message": "hello"})

    answer = (await client.state()).messages[-1]
    assert (answer.status, answer.error) == ("error", "No model is configured yet, so nobody can answer.")
    assert answer.error_detail == "No model is configured.", "the operator's sentence stays behind Details"


async def test_blank_message_and_missing_name_do_not_start_a_run(pipeline: SimpleNamespace) -> None:
    processor = BaseStateEventProcessor().configure(state_manager=StateManagerMemory())
    async with processor:
        tab = Client(processor)
        await tab.fire("send", form_data={"message": "hello"})
        state = await tab.state()
        assert state.name_dialog_open is True and state.messages == []

        await tab.fire("save_user_name", form_data={"user_name": "Ann"})
        await tab.fire("relocalise", lang="en")  # these tests read English; test_chat_lang covers Chinese
        await tab.fire("send", form_data={"message": "   "})
        assert (await tab.state()).messages == []
    assert pipeline.requests == []


async def test_the_name_dialog_cannot_change_a_verified_name(monkeypatch: pytest.MonkeyPatch) -> None:
    processor = BaseStateEventProcessor().configure(state_manager=StateManagerMemory())
    async with processor:
        tab = Client(processor)
        await tab.fire("save_user_name", form_data={"user_name": "Ann"})
        monkeypatch.setenv("AUTH_MODE", "local")  # issue 15: the server names the user
        get_settings.cache_clear()
        try:
            await tab.fire("save_user_name", form_data={"user_name": "Mallory"})
        finally:
            monkeypatch.delenv("AUTH_MODE")
            get_settings.cache_clear()
        assert (await tab.state()).user_name == "Ann", "an event sent by hand claims no other name"


async def test_an_edited_message_keeps_its_attachment_chip(client: Client, pipeline: SimpleNamespace) -> None:
    pipeline.events = [ev.Token(content="hi"), ev.Done(duration_ms=1, usage=USAGE)]
    csv = "/workspace/uploads/airflow.csv"
    (await client.state()).attachments = [csv]  # as an upload leaves it
    await client.fire("send", form_data={"message": "summarise this"})
    user = (await client.state()).messages[0]
    assert user.attachments == [csv] and pipeline.requests[-1].attachments == [csv]

    await client.fire("start_edit", message_id=user.id)
    await client.fire("send_edit", form_data={"edited": "summarise this, briefly"})

    state = await client.state()
    edited = state.messages[0]
    assert (edited.content, edited.attachments) == ("summarise this, briefly", [csv]), "the chip stays"
    assert pipeline.requests[-1].fork_turn == 0 and len(state.messages) == 2
    assert state.attachments == [], "the kept file is not put back in the composer"


async def test_the_edit_form_shows_the_files_it_sends_and_one_can_be_left_out(
    client: Client, pipeline: SimpleNamespace
) -> None:
    """Issue 12: the edit box hid the attachment that would be re-sent with the edited message."""
    pipeline.events = [ev.Token(content="hi"), ev.Done(duration_ms=1, usage=USAGE)]
    csv, fans = "/workspace/uploads/airflow.csv", "/workspace/uploads/fans.csv"
    (await client.state()).attachments = [csv, fans]
    await client.fire("send", form_data={"message": "compare these"})
    user = (await client.state()).messages[0]

    await client.fire("start_edit", message_id=user.id)
    assert (await client.state()).edit_attachments == [csv, fans], "shown as chips in the edit form"
    await client.fire("remove_edit_attachment", path=csv)
    await client.fire("send_edit", form_data={"edited": "only the fans"})

    state = await client.state()
    assert pipeline.requests[-1].keep_attachments == [fans] and pipeline.requests[-1].fork_turn == 0
    assert state.messages[0].attachments == [fans] and state.edit_attachments == []


async def test_the_header_names_no_model_when_none_is_configured(
    client: Client, pipeline: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """Tester: the header showed "gpt-4o-mini" (the default MODEL_NAME) although no model was configured."""
    from ventapp.config import load_settings

    bare = load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path)})
    assert not bare.model_configured and bare.model_name
    monkeypatch.setattr(cs, "_settings", lambda: bare)
    await client.fire("load_page")
    state = await client.state()
    assert (state.model_configured, state.model_name) == (False, "")


async def test_a_conversation_not_found_says_so_and_shows_a_new_chat(
    client: Client, pipeline: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tester (2 Dec): ``/?session=<another user's id>`` (or an unknown one) showed an empty new chat,
    silently."""
    stored = {SESSION: ([ChatMessageView(id="u", role="user", content="hello")], "full")}

    async def load_session(session_id: str, user_name: str, lang: str = "zh-CN") -> Any:
        return stored.get(session_id)  # None: not the user's, or no such session

    monkeypatch.setattr(cs, "load_session", load_session)

    await client.fire("open_session", session_id="someone-elses")

    state = await client.state()
    assert (state.session_id, state.messages) == ("", [])
    (notice,) = client.browser.functions.get(client.token, [])
    assert "This conversation was not found: it may have been deleted, or it is not yours." in notice
    assert '"warning"' in notice and cs.SESSION_NOT_FOUND in notice

    await client.fire("open_session", session_id=SESSION)
    assert len(client.browser.functions[client.token]) == 1, "a session of the user's opens quietly"


async def test_a_skill_prefix_refusal_is_the_bubbles_line_in_the_ui_language(
    client: Client, pipeline: SimpleNamespace
) -> None:
    """try15: "#skill: hi" showed "That skill is not installed." with the useful sentence (which
    skills are) only behind Details, and there in English in a Chinese UI."""
    from ventapp.agent.pipeline import ChatRejected as Refused
    from ventapp.state.turns import _refusal_words

    await client.fire("send", form_data={"message": "#skill: hi"})
    answer = (await client.state()).messages[-1]
    assert answer.status == "error" and answer.error.startswith("Write the skill's name after #skill:")
    assert "ventilation-calc" in answer.error and answer.error_detail == ""
    refused = Refused.by_key(400, "unknown_skill", "refusal.unknown_skill", skill="nosuch", listed=("a", "b"))
    assert _refusal_words(refused, "zh-CN") == "没有名为“nosuch”的技能。已安装的技能：a、b。", (
        "Chinese lists with 、"
    )
    assert _refusal_words(refused, "en") == "There is no skill named 'nosuch'. Installed skills: a, b."
