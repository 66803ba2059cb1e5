"""Human in the loop over real HTTP: approvals, edits, rejections, batches, questions, plans, tokens."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.sse_client import collapsed, post_chat, read_frames
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env


@pytest.fixture(scope="module")
def hitl_api(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    env = {**app_env(tmp_path_factory.mktemp("data"), llm.base_url), "HITL_TOOLS": "calculate"}
    with patched_env(env), ApiServer() as server:
        yield server


@pytest.fixture
def http(hitl_api: ApiServer, llm: ScriptedServer) -> Iterator[httpx.Client]:
    llm.reset()
    with httpx.Client(base_url=hitl_api.url, timeout=30) as client:
        yield client


def _resume(
    http: httpx.Client, headers: dict[str, str] | None = None, **body: Any
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    with http.stream("POST", "/api/chat/resume", json=body, headers=headers or {}) as response:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response, read_frames(response)
        response.read()
        return response, []


def _paused(http: httpx.Client, message: str, **fields: str) -> tuple[str, dict[str, Any]]:
    response, frames = post_chat(http, message=message, **fields)
    assert response.status_code == 200
    assert frames[-1]["type"] == "interrupt", [frame["type"] for frame in frames]
    assert "done" not in [frame["type"] for frame in frames]
    return response.headers["x-session-id"], frames[-1]


def _tool_messages(llm: ScriptedServer) -> list[dict[str, Any]]:
    return [m for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"]


def test_an_answers_duration_is_the_agents_working_time_not_the_wait_for_approval(
    http: httpx.Client, llm: ScriptedServer
) -> None:
    """Tester: approved after ~20 s, ~1 s of work read "24.8秒" (done 6301 ms, agent_done 341 ms)."""
    began = time.monotonic()
    session_id, frame = _paused(http, "please calculate 1+2")
    paused_s = time.monotonic() - began
    time.sleep(WAIT_S)  # the person reads the card
    began = time.monotonic()
    response, frames = _resume(
        http, session_id=session_id, interrupt_token=frame["interrupt_token"], decisions=[{"type": "approve"}]
    )
    resumed_s = time.monotonic() - began
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    done = frames[-1]["duration_ms"]
    assert done <= (paused_s + resumed_s) * 1000, f"{done} ms counts the {WAIT_S} s wait for the person"
    (agent_done,) = [f for f in frames if f["type"] == "agent_done" and f["agent_id"] == "main"]
    assert agent_done["duration_ms"] == done, "one figure: the main agent's and the answer's"
    runs = http.get(f"/api/sessions/{session_id}/runs").json()["runs"]
    assert runs[0]["duration_ms"] == done, "the stored figure, as the runs table keeps it"
    answer = http.get(f"/api/chat/history/{session_id}").json()["messages"][-1]
    assert answer["duration_ms"] == done, "and as the history shows it after a reload"


WAIT_S = 2.5


ZH_REASON = "计算器需要你批准后才会运行。"
EN_REASON = "Calculator needs your approval before it runs."


@pytest.mark.parametrize(
    ("accept", "expected", "other"),
    [
        (None, ZH_REASON, EN_REASON),
        ("zh-CN,zh;q=0.9,en;q=0.8", ZH_REASON, EN_REASON),
        ("de-DE,en;q=0.8,zh;q=0.5", EN_REASON, ZH_REASON),
    ],
)
def test_an_approval_reason_is_one_sentence_in_the_requests_language(
    hitl_api: ApiServer, llm: ScriptedServer, accept: str | None, expected: str, other: str
) -> None:
    """Tester: the frame's reason read "计算器 (calculate) needs your approval…" (two languages)."""
    llm.reset()
    headers = {"Accept-Language": accept} if accept else {}
    with httpx.Client(base_url=hitl_api.url, timeout=30, headers=headers) as client:
        session_id, frame = _paused(client, "please calculate 2+3")
        approval = frame["tool_approval"]
        assert approval["reason"] == approval["requests"][0]["reason"] == expected
        assert approval["reason_code"] == "needs_approval", "kept for clients that word it themselves"

        pending = client.get("/api/chat/interrupt", params={"session_id": session_id}).json()
        assert (
            pending["tool_approval"]["reason"]
            == pending["tool_approval"]["requests"][0]["reason"]
            == expected
        )
        flipped = "en" if expected == ZH_REASON else "zh-CN"
        again = client.get(
            "/api/chat/interrupt", params={"session_id": session_id}, headers={"Accept-Language": flipped}
        ).json()
        assert again["tool_approval"]["reason"] == other, "worded per request, not once per run"

        with client.stream(
            "GET", "/api/chat/stream", params={"session_id": session_id}, headers={"Accept-Language": flipped}
        ) as joined:
            assert joined.status_code == 200
            lines = "".join(joined.iter_text()).splitlines()  # "id: <seq>" then "data: {json}"
        interrupts = [
            json.loads(line[6:]) for line in lines if line.startswith("data: ") and '"interrupt"' in line
        ]
        assert [f["tool_approval"]["reason"] for f in interrupts] == [other]


def test_approve_runs_the_tool_once_and_streams_the_answer(http: httpx.Client, llm: ScriptedServer) -> None:
    session_id, frame = _paused(http, "please calculate (12+8)*3")
    approval = frame["tool_approval"]
    assert (
        approval["tool"] == "calculate"
        and approval["args"] == {"expression": "(12+8)*3"}
        and approval["count"] == 1
    )
    assert frame["kind"] == "tool_approval" and frame["interrupt_token"] and frame["tool_call_ids"]
    assert approval["reason"] == "计算器需要你批准后才会运行。"  # no Accept-Language: zh-CN
    assert approval["reason_code"] == approval["requests"][0]["reason_code"] == "needs_approval"
    pending = http.get("/api/chat/interrupt", params={"session_id": session_id})
    assert pending.status_code == 200 and pending.json()["interrupt_token"] == frame["interrupt_token"]

    token = frame["interrupt_token"]
    response, frames = _resume(
        http, session_id=session_id, interrupt_token=token, decisions=[{"type": "approve"}]
    )
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    result = next(f for f in frames if f["type"] == "tool_result")
    assert result["content"] == "60" and result["tool_call_id"] == frame["tool_call_ids"][0]
    assert "The result is 60." in "".join(f["content"] for f in frames if f["type"] == "token")
    assert [m["content"] for m in _tool_messages(llm)] == ["60"], "the tool ran exactly once"

    again, _ = _resume(http, session_id=session_id, interrupt_token=token, decisions=[{"type": "approve"}])
    assert again.status_code == 409, "a repeated approval is refused"
    assert http.get("/api/chat/interrupt", params={"session_id": session_id}).status_code == 204

    history = http.get(f"/api/chat/history/{session_id}").json()["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"], "the resumed answer extends the paused one"
    assert history[-1]["status"] == "complete" and history[-1]["tool_calls"][0]["content"] == "60"
    saved = history[-1]["usage"]
    assert saved["currency"] == "CNY" and saved["cost_micros"] > 0, "the saved answer carries its cost"
    assert saved["model_calls"] == 2, "both parts of the paused-and-resumed answer are counted"
    live = frames[-1]["usage"]
    assert {k: live[k] for k in ("input_tokens", "output_tokens", "model_calls", "cost_micros")} == {
        k: saved[k] for k in ("input_tokens", "output_tokens", "model_calls", "cost_micros")
    }, "the live footer after approval equals the saved one"
    assert "60" in history[-1]["content"]


def _join(http: httpx.Client, session_id: str, **headers: str) -> tuple[int, list[int], list[dict[str, Any]]]:
    """``GET /api/chat/stream``: (status, the ``id:`` numbers, the frames; a refusal's body as one frame)."""
    with http.stream("GET", "/api/chat/stream", params={"session_id": session_id}, headers=headers) as joined:
        lines = "".join(joined.iter_text()).splitlines()
    if joined.headers.get("content-type", "").startswith("application/json"):
        return joined.status_code, [], [json.loads("".join(lines))]
    ids = [int(line[4:]) for line in lines if line.startswith("id: ")]
    return joined.status_code, ids, [json.loads(line[6:]) for line in lines if line.startswith("data: ")]


def test_a_join_without_last_event_id_after_a_resume_reads_the_resumed_part(http: httpx.Client) -> None:
    """F10: a "from now" join right after an approval got 410 (the paused part's frames are dropped)."""
    session_id, frame = _paused(http, "please calculate 4*5")
    paused_last = frame["seq"]
    response, resumed = _resume(
        http, session_id=session_id, interrupt_token=frame["interrupt_token"], decisions=[{"type": "approve"}]
    )
    assert response.status_code == 200 and resumed[-1]["type"] == "done"

    status, ids, frames = _join(http, session_id)
    assert status == 200, "no Last-Event-ID names no dropped frame: not 410"
    assert ids == [f["seq"] for f in frames] and ids[0] == paused_last + 1
    assert collapsed(frames) == collapsed(resumed), "the kept frames, in order"
    assert frames[-1]["type"] == "done" and any(f["type"] == "tool_result" for f in frames)

    status, _, (gone,) = _join(http, session_id, **{"Last-Event-ID": "1"})
    assert status == 410, "a Last-Event-ID inside the dropped paused part is still a gap"
    _, _, (gone_en,) = _join(http, session_id, **{"Last-Event-ID": "1", "Accept-Language": "en"})
    kept = f"(oldest kept: {paused_last + 1})"
    assert gone["code"] == gone_en["code"] == "gone" and gone["detail"] == gone_en["detail"]
    assert gone_en["message"] == gone_en["detail"] and gone_en["detail"].endswith(kept)
    assert (
        gone["message"]
        == f"这个编号之后的帧已不再保留，请改为读取对话历史。（最早保留的编号：{paused_last + 1}）"
    )
    status, ids, again = _join(http, session_id, **{"Last-Event-ID": str(paused_last)})
    assert status == 200 and ids == [f["seq"] for f in again] and collapsed(again) == collapsed(resumed)


def test_reject_never_runs_the_tool_and_the_model_sees_why(http: httpx.Client, llm: ScriptedServer) -> None:
    session_id, frame = _paused(http, "please calculate 7*6")
    reason = "Use the metric handbook value instead."
    response, frames = _resume(
        http,
        session_id=session_id,
        interrupt_token=frame["interrupt_token"],
        decisions=[{"type": "reject", "message": reason}],
    )
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    contents = [m["content"] for m in _tool_messages(llm)]
    assert contents == [f"用户拒绝了这次操作，理由：{reason}"], (
        "the model reads that the call was rejected, then the reason (the bare reason read as the"
        " tool's output), in the turn's language, not langchain's English wrapper"
    )
    answer = "".join(f.get("content", "") for f in frames if f["type"] == "token")
    assert answer.endswith(contents[0]) and "结果是" not in answer, (
        "the demo model reads a rejection, not a result"
    )
    saved = http.get(f"/api/chat/history/{session_id}").json()["messages"][-1]["tool_calls"][0]
    assert saved["review"] == "rejected", "the stored card says the person rejected it (not a failure)"


@pytest.mark.parametrize(
    ("accept", "reason"),
    [
        (None, "用户拒绝了这次操作，没有说明原因。"),
        ("en", "The user rejected this action without giving a reason."),
    ],
)
def test_a_reject_without_reason_reads_in_the_requests_language(
    http: httpx.Client, llm: ScriptedServer, accept: str | None, reason: str
) -> None:
    session_id, frame = _paused(http, "please calculate 7*6")
    response, frames = _resume(
        http,
        {"Accept-Language": accept} if accept else None,
        session_id=session_id,
        interrupt_token=frame["interrupt_token"],
        decisions=[{"type": "reject"}],
    )
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    contents = [m["content"] for m in _tool_messages(llm)]
    assert contents == [reason], "the model reads the bare reason in the turn's language"
    assert "User rejected" not in json.dumps(llm.requests()[-1], ensure_ascii=False)
    answer = "".join(f.get("content", "") for f in frames if f["type"] == "token")
    assert answer.endswith(reason) and "User rejected" not in answer, "the demo answer quotes the reason once"
    result = next(f for f in frames if f["type"] == "tool_result")
    assert result["content"] == reason, "the result line shows the reason, not langchain's English wrapper"
    assert result["tool"] == "calculate" and result["error"] is True, "machine-readable fields unchanged"
    saved = http.get(f"/api/chat/history/{session_id}").json()["messages"][-1]["tool_calls"][0]
    assert saved["content"] == reason


def test_edit_runs_the_tool_with_the_edited_arguments(http: httpx.Client, llm: ScriptedServer) -> None:
    session_id, frame = _paused(http, "please calculate 1+1")
    response, frames = _resume(
        http,
        session_id=session_id,
        interrupt_token=frame["interrupt_token"],
        decisions=[{"type": "edit", "args": {"expression": "2*21"}}],
    )
    assert response.status_code == 200
    result = next(f for f in frames if f["type"] == "tool_result")
    assert result["content"] == "42", "people see the result; the framework's note is for the model"
    edited = [f for f in frames if f["type"] == "tool_call" and f["tool_call_id"] == result["tool_call_id"]]
    assert edited and edited[-1]["args"] == {"expression": "2*21"}, "the card shows the arguments that ran"
    (tool_message,) = _tool_messages(llm)
    assert str(tool_message["content"]).endswith("42") and "reviewer" in str(tool_message["content"])
    saved = http.get(f"/api/chat/history/{session_id}").json()["messages"][-1]["tool_calls"][0]
    assert saved["args"] == {"expression": "2*21"} and saved["content"] == "42"
    assert saved["review"] == "edited" and saved["original_args"] == {"expression": "1+1"}, "old → new kept"


def test_batch_of_two_needs_two_decisions(http: httpx.Client, llm: ScriptedServer) -> None:
    llm.push(
        {
            "tool_calls": [
                {"name": "calculate", "arguments": {"expression": "2+2"}},
                {"name": "calculate", "arguments": {"expression": "3+3"}},
            ]
        },
        {"content": "Both handled."},
    )
    session_id, frame = _paused(http, "two sums")
    approval = frame["tool_approval"]
    assert approval["count"] == 2 and [r["args"]["expression"] for r in approval["requests"]] == [
        "2+2",
        "3+3",
    ]
    assert len(frame["tool_call_ids"]) == 2
    token = frame["interrupt_token"]
    short, _ = _resume(http, session_id=session_id, interrupt_token=token, decisions=[{"type": "approve"}])
    assert short.status_code == 422, "one decision per call"
    # Tester: a lowercase developer string with errors[].loc == [], English under the default zh-CN.
    refused = short.json()
    assert refused["code"] == "bad_request"
    assert refused["message"] == "每个工具调用需要一个决定：这次审批有 2 个调用，请求发送了 1 个决定。"
    assert refused["detail"] == "Send one decision per tool call: this approval has 2 and the request sent 1."
    assert [(e["loc"], e["msg"]) for e in refused["errors"]] == [(["body", "decisions"], refused["detail"])]
    no_args, _ = _resume(
        http,
        {"Accept-Language": "en"},
        session_id=session_id,
        interrupt_token=token,
        decisions=[{"type": "approve"}, {"type": "edit"}],
    )
    assert no_args.status_code == 422 and no_args.json()["errors"][0]["loc"] == [
        "body",
        "decisions",
        1,
        "args",
    ]
    edit_sentence = "An edit decision needs the changed arguments as a JSON object in 'args'."
    assert no_args.json()["message"] == no_args.json()["detail"] == edit_sentence
    response, _ = _resume(
        http,
        session_id=session_id,
        interrupt_token=token,
        decisions=[{"type": "approve"}, {"type": "reject", "message": "not this one"}],
    )
    assert response.status_code == 200
    contents = sorted(str(m["content"]) for m in _tool_messages(llm))
    assert contents[0] == "4" and "not this one" in contents[1] and "6" not in contents


def test_ask_user_round_trip(http: httpx.Client, llm: ScriptedServer) -> None:
    llm.push(
        {
            "tool_calls": [
                {"name": "ask_user", "arguments": {"questions": ["How many people work in the heading?"]}}
            ]
        }
    )
    session_id, frame = _paused(http, "size the airflow for my heading")
    assert frame["kind"] == "ask_user" and frame["ask_user"]["questions"] == [
        "How many people work in the heading?"
    ]
    response, frames = _resume(
        http, session_id=session_id, interrupt_token=frame["interrupt_token"], answers=["Twelve people"]
    )
    assert response.status_code == 200 and frames[-1]["type"] == "done"
    assert "Twelve people" in str(_tool_messages(llm)[-1]["content"])


def test_an_answer_holding_nul_is_a_400_and_the_question_still_waits(
    http: httpx.Client, llm: ScriptedServer
) -> None:
    """Tester (try19): PostgreSQL cannot store NUL; the answer is refused before anything runs."""
    llm.push({"tool_calls": [{"name": "ask_user", "arguments": {"questions": ["How many people?"]}}]})
    session_id, frame = _paused(http, "size the airflow")
    token = frame["interrupt_token"]
    for answer in ({"answers": ["Twelve\x00people"]}, {"feedback": "no\x00", "approved": False}):
        response, frames = _resume(http, session_id=session_id, interrupt_token=token, **answer)
        assert response.status_code == 400 and frames == [], response.text
        assert response.json()["detail"].startswith("The answer holds an invisible NUL character")
    response, frames = _resume(http, session_id=session_id, interrupt_token=token, answers=["Twelve people"])
    assert response.status_code == 200 and frames[-1]["type"] == "done"


def test_plan_mode_round_trip(http: httpx.Client, llm: ScriptedServer) -> None:
    plan = "1. Search the air requirements.\n2. Calculate the airflow."
    llm.push({"tool_calls": [{"name": "request_plan_approval", "arguments": {"plan": plan}}]})
    session_id, frame = _paused(http, "plan the airflow check", mode="plan")
    system = llm.requests()[-1]["messages"][0]["content"]
    assert "PLAN MODE" in str(system) and "request_plan_approval" in str(system)
    assert frame["kind"] == "plan" and frame["message"] == plan
    llm.push({"content": "I will revise the plan."})
    response, _ = _resume(
        http,
        session_id=session_id,
        interrupt_token=frame["interrupt_token"],
        approved=False,
        feedback="Add a velocity check.",
    )
    assert response.status_code == 200
    assert "REJECTED: Add a velocity check." in str(_tool_messages(llm)[-1]["content"])


def test_older_token_is_409_and_nothing_runs(http: httpx.Client, llm: ScriptedServer) -> None:
    session_id, first = _paused(http, "please calculate 1+2")
    response, _ = _resume(
        http, session_id=session_id, interrupt_token=first["interrupt_token"], decisions=[{"type": "approve"}]
    )
    assert response.status_code == 200
    _, second = _paused(http, "please calculate 5+5", session_id=session_id)
    assert second["interrupt_token"] != first["interrupt_token"]
    calls = len(llm.requests())
    stale, _ = _resume(
        http, session_id=session_id, interrupt_token=first["interrupt_token"], decisions=[{"type": "approve"}]
    )
    assert stale.status_code == 409 and stale.json()["code"] == "stale_interrupt"
    english, _ = _resume(
        http,
        {"Accept-Language": "en"},
        session_id=session_id,
        interrupt_token=first["interrupt_token"],
        decisions=[{"type": "approve"}],
    )
    stale_en = "This approval is out of date or was already answered. Reload to see the current one."
    assert english.status_code == 409 and english.json()["code"] == "stale_interrupt"
    assert stale.json()["message"] == "这个审批已过期或已被答复。请刷新查看当前的请求。", "zh-CN by default"
    assert english.json()["message"] == stale_en
    assert stale.json()["detail"] == english.json()["detail"] == stale_en, "detail stays English"
    assert len(llm.requests()) == calls


def test_no_pending_interrupt_and_foreign_session(http: httpx.Client) -> None:
    response, frames = post_chat(http, message="hello there", user_name="alice")
    session_id = response.headers["x-session-id"]
    assert frames[-1]["type"] == "done"
    none, _ = _resume(http, session_id=session_id, interrupt_token="x", user_name="alice", decisions=[])
    assert none.status_code == 409 and none.json()["code"] == "no_interrupt"
    foreign, _ = _resume(http, session_id=session_id, interrupt_token="x", user_name="mallory")
    assert foreign.status_code == 404
    assert (
        http.get("/api/chat/interrupt", params={"session_id": session_id, "user_name": "mallory"}).status_code
        == 404
    )
    assert (
        http.get("/api/chat/interrupt", params={"session_id": session_id, "user_name": "alice"}).status_code
        == 204
    )


def test_interrupt_frame_matches_the_route(http: httpx.Client) -> None:
    session_id, frame = _paused(http, "please calculate 9*9")
    routed = http.get("/api/chat/interrupt", params={"session_id": session_id}).json()
    for key in ("kind", "tool_approval", "interrupt_token", "tool_call_ids"):
        assert json.dumps(routed[key], sort_keys=True) == json.dumps(frame[key], sort_keys=True)


def test_new_message_instead_of_an_answer_closes_the_pending_run(http: httpx.Client) -> None:
    session_id, frame = _paused(http, "please calculate 3*3")
    response, _ = post_chat(http, message="never mind, hello", session_id=session_id)
    assert response.status_code == 200
    runs = http.get(f"/api/sessions/{session_id}/runs").json()
    statuses = sorted(run["status"] for run in (runs["runs"] if isinstance(runs, dict) else runs))
    assert "waiting_input" not in statuses and "cancelled" in statuses
    stale, _ = _resume(
        http, session_id=session_id, interrupt_token=frame["interrupt_token"], decisions=[{"type": "approve"}]
    )
    assert stale.status_code == 409


def test_a_new_message_drops_the_pending_call_and_does_not_show_it_again(http: httpx.Client) -> None:
    """Tester's item 6: "Send anyway" while an approval waits. The framework patches the dropped call
    with a synthetic error result when the next turn starts; that was shown as a "Calculator ·
    Failed" card (with the framework's English sentence) in the new answer, live and after a reload."""
    session_id, frame = _paused(http, "please calculate (12+8)*3")

    response, frames = post_chat(http, message="hello", session_id=session_id)

    assert response.status_code == 200 and frames[-1]["type"] == "done"
    shown = [f for f in frames if f["type"] in ("tool_call", "tool_result", "executing")]
    assert shown == [], "the new answer shows no card of the dropped call"
    history = http.get(f"/api/chat/history/{session_id}").json()["messages"]
    assert history[-1]["role"] == "assistant" and history[-1]["tool_calls"] == []
    dropped = next(m for m in history if m["role"] == "assistant")
    assert [c["tool_call_id"] for c in dropped["tool_calls"]] == frame["tool_call_ids"], "it stays on its own"
