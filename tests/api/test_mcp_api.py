"""MCP tool servers end to end (issue 16): the scripted model calls the tiny site server's tools over
stdio and streamable HTTP through the real API, with approvals, failures, health and reload."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.sse_client import post_chat, read_frames
from tests.mcp_server import SERVER_FILE, HttpMcpServer, free_port
from tests.scripted_llm.server import ScriptedServer
from tests.support import ApiServer, app_env, patched_env
from ventapp.tools import registry
from ventapp.tools.mcp_tools import MODULE_PREFIX

_SITE = {
    "command": sys.executable,
    "args": [str(SERVER_FILE), "stdio"],
    "tools": ["read_airflow", "set_fan_speed", "site_documents", "big_log", "crash", "hold"],
    "approval": ["set_fan_speed"],
    "timeout": 30,
}


def _servers(web_url: str, gone_url: str) -> dict[str, Any]:
    return {
        "site": _SITE,
        "web": {"url": web_url, "tools": ["read_airflow", "crash"], "timeout": 15},
        "gone": {"url": gone_url, "timeout": 5},
    }


@pytest.fixture(scope="module")
def web() -> Iterator[HttpMcpServer]:
    with HttpMcpServer() as server:
        yield server


@pytest.fixture(scope="module")
def gone_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def mcp_api(
    llm: ScriptedServer, web: HttpMcpServer, gone_port: int, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiServer]:
    env = {
        **app_env(tmp_path_factory.mktemp("data"), llm.base_url),
        "MCP_SERVERS": json.dumps(_servers(web.url, f"http://127.0.0.1:{gone_port}/mcp")),
        "MCP_OUTPUT_MAX_CHARS": "3000",
        "MCP_RETRY_S": "1",
        "HITL_TOOLS": "gone__read_airflow",  # a tool of a server that is down at start
        "AUTH_NONE_OPERATORS": "ops",  # reload is an operator action
    }
    with patched_env(env), ApiServer() as server:
        yield server
    registry.remove_specs(MODULE_PREFIX)


@pytest.fixture
def http(mcp_api: ApiServer, llm: ScriptedServer) -> Iterator[httpx.Client]:
    llm.reset()
    with httpx.Client(base_url=mcp_api.url, timeout=60) as client:
        yield client


def _ask(http: httpx.Client, tool: str, args: dict[str, Any]) -> list[dict]:
    # The scripted model calls an offered <server>__<tool> named in the message, with the JSON after it.
    response, frames = post_chat(http, message=f"use {tool} {json.dumps(args)}")
    assert response.status_code == 200, response.text
    return frames


def _result(frames: list[dict[str, Any]]) -> dict[str, Any]:
    return next(frame for frame in frames if frame["type"] == "tool_result")


def _tool_messages(llm: ScriptedServer) -> list[str]:
    return [str(m["content"]) for m in llm.requests()[-1]["messages"] if m.get("role") == "tool"]


def _mcp_health(http: httpx.Client) -> dict[str, Any]:
    response = http.get("/health")
    assert response.status_code == 200, "a down MCP server never takes the app down"
    return response.json()["subsystems"]["mcp_servers"]


def test_tools_are_grouped_by_server_with_allow_list_and_approval(http: httpx.Client) -> None:
    groups = {group["group"]: group for group in http.get("/api/model/tools").json()["groups"]}
    site = groups["MCP: site"]
    assert site["mcp_server"] == "site"
    assert [tool["name"] for tool in site["tools"]] == [f"site__{name}" for name in _SITE["tools"]]
    approval = {tool["name"]: tool["requires_approval"] for tool in site["tools"]}
    assert approval["site__set_fan_speed"] is True and approval["site__read_airflow"] is False
    assert [tool["name"] for tool in groups["MCP: web"]["tools"]] == ["web__read_airflow", "web__crash"]
    assert "MCP: gone" not in groups and "计算" in str(groups), "our tools stay beside theirs"
    agent = http.get("/api/model").json()["agent"]
    assert "site__read_airflow" in agent["tools"] and agent["mcp_servers"]["site"]["status"] == "up"


def test_a_server_down_at_start_is_listed_down_and_the_app_is_up(http: httpx.Client) -> None:
    check = _mcp_health(http)
    assert check["status"] == "degraded" and "gone" in check["reason"]
    gone = check["servers"]["gone"]
    assert gone["status"] == "down" and "connection refused" in gone["reason"] and gone["tools"] == []
    assert check["servers"]["site"]["status"] == "up" and check["servers"]["web"]["status"] == "up"
    deadline = time.monotonic() + 30
    while http.get("/health").json()["model"]["prompt"] is None:
        assert time.monotonic() < deadline, (
            "the fixed prompt is measured although HITL_TOOLS names a down tool"
        )
        time.sleep(0.2)


@pytest.mark.parametrize("tool", ["site__read_airflow", "web__read_airflow"])
def test_the_agent_calls_a_stdio_and_an_http_tool(tool: str, http: httpx.Client, llm: ScriptedServer) -> None:
    frames = _ask(http, tool, {"airway": "A7"})
    result = _result(frames)
    assert (
        result["tool"] == tool and not result["error"] and json.loads(result["content"])["flow_m3s"] == 42.5
    )
    assert frames[-1]["type"] == "done"
    assert "Done:" in "".join(f["content"] for f in frames if f["type"] == "token"), (
        "the model got the result"
    )
    session_id = frames[0].get("session_id") or next(f["session_id"] for f in frames if f.get("session_id"))
    saved = http.get(f"/api/chat/history/{session_id}").json()["messages"][-1]
    assert saved["tool_calls"][0]["tool"] == tool and "42.5" in saved["tool_calls"][0]["content"]


def _paused(http: httpx.Client) -> tuple[str, dict[str, Any]]:
    message = 'slow the fan: site__set_fan_speed {"fan": "F1", "rpm": 900}'
    with http.stream("POST", "/api/chat", files={"message": (None, message)}) as response:
        frames = read_frames(response)
        session_id = response.headers["x-session-id"]
    assert frames[-1]["type"] == "interrupt", [f["type"] for f in frames]
    approval = frames[-1]["tool_approval"]
    assert approval["tool"] == "site__set_fan_speed" and approval["args"] == {"fan": "F1", "rpm": 900}
    return session_id, frames[-1]


def _resume(
    http: httpx.Client, session_id: str, frame: dict[str, Any], decision: dict
) -> list[dict[str, Any]]:
    body = {"session_id": session_id, "interrupt_token": frame["interrupt_token"], "decisions": [decision]}
    with http.stream("POST", "/api/chat/resume", json=body) as response:
        assert response.status_code == 200
        return read_frames(response)


def test_an_approval_tool_waits_for_a_person_then_runs(http: httpx.Client, llm: ScriptedServer) -> None:
    session_id, frame = _paused(http)
    frames = _resume(http, session_id, frame, {"type": "approve"})
    assert _result(frames)["content"] == "fan F1 set to 900 rpm" and frames[-1]["type"] == "done"


def test_a_rejected_approval_never_reaches_the_server(http: httpx.Client, llm: ScriptedServer) -> None:
    session_id, frame = _paused(http)
    frames = _resume(http, session_id, frame, {"type": "reject", "message": "Not during the shift change."})
    assert frames[-1]["type"] == "done"
    contents = _tool_messages(llm)
    assert not any("set to 900 rpm" in c for c in contents)
    assert any("Not during the shift change." in c for c in contents)


@pytest.mark.parametrize("server", ["site", "web"])
def test_a_server_killed_mid_call_gives_a_readable_error_and_the_run_goes_on(
    server: str, http: httpx.Client, llm: ScriptedServer, web: HttpMcpServer
) -> None:
    frames = _ask(http, f"{server}__crash", {})
    result = _result(frames)
    assert (
        result["error"]
        and f"MCP server '{server}' could not be reached or stopped answering" in result["content"]
    )
    assert frames[-1]["type"] == "done", "the run continues after the failed tool"
    assert _mcp_health(http)["servers"][server]["status"] == "down"
    if server == "web":
        web.stop()
        web.start()  # the site restarts its server on the same port; no restart of ours
    again = _result(_ask(http, f"{server}__read_airflow", {"airway": "C3"}))
    assert not again["error"] and "C3" in again["content"]
    assert _mcp_health(http)["servers"][server]["status"] == "up", "reconnected without a restart"


def test_sources_become_citations_and_long_output_is_cut(http: httpx.Client, llm: ScriptedServer) -> None:
    frames = _ask(http, "site__site_documents", {"query": "shaft 2"})
    citations = [f for f in frames if f["type"] == "citations"][-1]["items"]
    assert (
        citations[0]["url"] == "https://docs.site.example/shaft-2"
        and citations[0]["tool"] == "site__site_documents"
    )
    _ask(http, "site__big_log", {})
    (sent,) = _tool_messages(llm)
    assert len(sent) < 3200 and "200,000 characters" in sent, "the model never sees the 200,000 characters"


def test_a_server_down_at_start_is_picked_up_at_a_later_run(
    http: httpx.Client, llm: ScriptedServer, gone_port: int
) -> None:
    with HttpMcpServer(gone_port):
        deadline = time.monotonic() + 60
        # The agents are rebuilt just after the listing: wait for the tools, not only the state.
        while "MCP: gone" not in {g["group"] for g in http.get("/api/model/tools").json()["groups"]}:
            assert time.monotonic() < deadline, _mcp_health(http)
            time.sleep(1.1)  # MCP_RETRY_S
            response, _ = post_chat(http, message="hello")  # a run starts the retry, in the background
            assert response.status_code == 200
        with http.stream(
            "POST", "/api/chat", files={"message": (None, 'gone__read_airflow {"airway": "D4"}')}
        ) as response:
            frames = read_frames(response)
            session_id = response.headers["x-session-id"]
        assert frames[-1]["type"] == "interrupt", "the next run has the tool, and HITL_TOOLS applies to it"
        assert frames[-1]["tool_approval"]["tool"] == "gone__read_airflow"
        frames = _resume(http, session_id, frames[-1], {"type": "approve"})
        result = _result(frames)
        assert not result["error"] and "D4" in result["content"] and frames[-1]["type"] == "done"


def test_reload_reads_the_configuration_again(http: httpx.Client, web: HttpMcpServer, gone_port: int) -> None:
    saved = os.environ["MCP_SERVERS"]
    gone = {"url": f"http://127.0.0.1:{gone_port}/mcp", "enabled": False}  # HITL_TOOLS names its tool
    os.environ["MCP_SERVERS"] = json.dumps(
        {"site": {**_SITE, "tools": ["read_airflow"], "approval": []}, "gone": gone}
    )
    try:
        response = http.post("/api/model/reload", params={"user_name": "ops"})
        assert response.status_code == 200, response.text
        assert [n for n in response.json()["tools"] if "__" in n] == ["site__read_airflow"]
        servers = _mcp_health(http)["servers"]
        assert set(servers) == {"site", "gone"} and servers["gone"]["status"] == "disabled"
        os.environ["MCP_SERVERS"] = '{"site": {"command": "x", "timeout": -1}}'
        refused = http.post("/api/model/reload", params={"user_name": "ops"})
        assert refused.status_code == 500 and refused.json()["code"] == "reload_failed"
        assert "MCP_SERVERS.site.timeout" in refused.json()["message"], "the key to fix is named"
        assert "site__read_airflow" in http.get("/api/model").json()["agent"]["tools"], (
            "the agents in use stay"
        )
    finally:
        os.environ["MCP_SERVERS"] = saved
        assert http.post("/api/model/reload", params={"user_name": "ops"}).status_code == 200


def _alive(pid: int) -> bool:
    """True while process ``pid`` exists, a zombie too (the app's asyncio reaps its stdio servers)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_stop_during_a_stdio_tool_closes_at_once_and_the_server_ends(http: httpx.Client) -> None:
    # The tester's defect: the stop waited for the stdio server to shut down (~3 s) before the
    # closing frame; Stop must be prompt, and the server process must still end.
    pid_file = Path(os.environ["DATA_DIR"]) / "mcp" / "site" / "hold.pid"
    pid_file.unlink(missing_ok=True)
    frames: list[dict[str, Any]] = []
    closed_at: list[float] = []

    def read() -> None:  # a client of its own: this thread streams while the test stops
        message = 'use site__hold {"seconds": 60}'
        with (
            httpx.Client(base_url=http.base_url, timeout=60) as client,
            client.stream("POST", "/api/chat", files={"message": (None, message)}) as response,
        ):
            frames.append({"session_id": response.headers["x-session-id"]})
            frames.extend(read_frames(response))
            closed_at.append(time.monotonic())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline and reader.is_alive(), "the server never ran the slow tool"
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    stopped_at = time.monotonic()
    stop = http.post("/api/chat/stop", data={"session_id": frames[0]["session_id"]})
    assert stop.json() == {"stopped": True}
    reader.join(30)
    assert closed_at, "the stream never closed"
    latency = closed_at[0] - stopped_at
    assert frames[-1]["type"] == "error" and frames[-1]["code"] == "cancelled"
    assert latency < 1.5, f"the closing frame came {latency:.2f} s after the stop"
    deadline = time.monotonic() + 10
    while _alive(pid):
        assert time.monotonic() < deadline, "the stdio server of the stopped call still runs"
        time.sleep(0.05)
    again = _result(_ask(http, "site__read_airflow", {"airway": "E5"}))
    assert not again["error"] and "E5" in again["content"], "the next call starts a new server"
