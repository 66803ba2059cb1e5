"""MCP servers' tools in the registry, called over the official SDK (issue 16): the tiny site server
under ``tests/mcp_server`` over stdio and streamable HTTP, no mocks."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from tests.mcp_server import SERVER_FILE, HttpMcpServer, free_port
from ventapp.config import PROJECT_ROOT
from ventapp.mcp_config import parse_servers
from ventapp.tools import registry, workspace_files
from ventapp.tools.mcp_hub import McpClash, McpHub
from ventapp.tools.mcp_tools import MODULE_PREFIX


def _stdio(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER_FILE), "stdio"], "timeout": 20, **extra}


def _hub(tmp_path: Path, servers: dict[str, Any], max_chars: int = 2000) -> McpHub:
    return McpHub(parse_servers(json.dumps(servers), tmp_path), tmp_path / "mcp", max_chars, retry_s=0)


def _call(name: str, args: dict[str, Any] | None = None) -> ToolMessage:
    spec = registry.get_spec(name)
    assert spec is not None, name
    call = {"name": name, "args": args or {}, "id": "call-1", "type": "tool_call"}
    return asyncio.run(spec.tool.ainvoke(call))


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    yield
    registry.remove_specs(MODULE_PREFIX)
    workspace_files.set_workspace_resolver(None)


def test_allowed_tools_are_registered_by_server_with_their_approval(tmp_path: Path) -> None:
    hub = _hub(
        tmp_path,
        {"site": _stdio(tools=["read_airflow", "set_fan_speed", "nope"], approval=["set_fan_speed"])},
    )
    assert hub.load(strict=True) is True
    hub.install(strict=True)
    mcp = {spec.name: spec for spec in registry.all_specs() if spec.module.startswith(MODULE_PREFIX)}
    assert set(mcp) == {"site__read_airflow", "site__set_fan_speed"}, "the allow-list keeps the rest out"
    assert mcp["site__set_fan_speed"].requires_approval and not mcp["site__read_airflow"].requires_approval
    assert "site__set_fan_speed" in registry.approval_required()
    assert {spec.group for spec in mcp.values()} == {"MCP: site"}
    state = hub.public()["site"]
    assert state["status"] == "up" and state["notes"] == ["tools: the server offers no 'nope'"]

    message = _call("site__read_airflow", {"airway": "A7"})
    assert message.status == "success" and json.loads(message.content) == {"airway": "A7", "flow_m3s": 42.5}


def test_a_server_down_at_start_is_listed_down_and_left_out(tmp_path: Path) -> None:
    hub = _hub(
        tmp_path,
        {
            "site": _stdio(tools=["read_airflow"]),
            "gone": {"url": f"http://127.0.0.1:{free_port()}/mcp", "timeout": 5},
            "broken": {"command": str(tmp_path / "no-such-program")},
            "off": _stdio(enabled=False),
        },
    )
    hub.load(strict=True)
    hub.install(strict=True)
    states = hub.public()
    assert states["gone"]["status"] == "down" and "connection refused" in states["gone"]["reason"]
    assert states["broken"]["status"] == "down" and "could not be started" in states["broken"]["reason"]
    assert states["off"]["status"] == "disabled" and states["site"]["status"] == "up"
    assert [s.name for s in registry.all_specs() if s.module.startswith(MODULE_PREFIX)] == [
        "site__read_airflow"
    ]
    assert sorted(hub.down()) == ["broken", "gone"] and hub.retry_due()


def test_a_stdio_script_given_by_a_relative_path_is_down_with_a_hint(tmp_path: Path) -> None:
    relative = {"command": sys.executable, "args": ["tests/mcp_server/__main__.py", "stdio"], "timeout": 20}
    hub = _hub(tmp_path, {"site": relative})
    hub.load(strict=True)
    reason = hub.public()["site"]["reason"]
    assert hub.public()["site"]["status"] == "down" and "connection closed" in reason
    assert "DATA_DIR/mcp/site" in reason and "absolute paths" in reason, "the likely cause, named"


def test_a_server_that_comes_back_is_picked_up_by_the_next_listing(tmp_path: Path) -> None:
    port = free_port()
    hub = _hub(tmp_path, {"web": {"url": f"http://127.0.0.1:{port}/mcp", "tools": ["read_airflow"]}})
    assert hub.load(strict=True) is False and hub.down() == ["web"]
    with HttpMcpServer(port):
        assert hub.load(hub.down()) is True, "its tools arrived: the agents need rebuilding"
        hub.install()
        assert hub.public()["web"]["status"] == "up"
        assert json.loads(_call("web__read_airflow", {"airway": "B2"}).content)["airway"] == "B2"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_server_dying_mid_call_answers_with_a_readable_error_and_the_next_call_reconnects(
    transport: str, tmp_path: Path
) -> None:
    http = HttpMcpServer().start() if transport == "http" else None
    try:
        entry = {"url": http.url, "timeout": 10} if http else _stdio()
        hub = _hub(tmp_path, {"site": {**entry, "tools": ["crash", "read_airflow"]}})
        hub.load(strict=True)
        hub.install(strict=True)
        died = _call("site__crash")
        assert died.status == "error"
        assert "MCP server 'site' could not be reached or stopped answering" in died.content
        assert "Traceback" not in died.content and str(tmp_path) not in died.content
        assert hub.public()["site"]["status"] == "down", "health shows the failed call"
        if http:
            http.stop()
            http.start()  # same port: the site restarted its server
        again = _call("site__read_airflow", {"airway": "A7"})
        assert again.status == "success" and "42.5" in again.content
        assert hub.public()["site"]["status"] == "up"
    finally:
        if http:
            http.stop()


def test_a_call_that_outlasts_the_timeout_answers_with_a_readable_error(tmp_path: Path) -> None:
    hub = _hub(tmp_path, {"site": _stdio(tools=["wait"], timeout=8)})
    hub.load(strict=True)
    hub.install(strict=True)
    started = time.monotonic()
    slow = _call("site__wait", {"seconds": 60})
    assert time.monotonic() - started < 20
    assert slow.status == "error" and "(no answer within 8 s)" in slow.content


def test_long_output_is_cut_and_sources_survive(tmp_path: Path) -> None:
    hub = _hub(tmp_path, {"site": _stdio(tools=["big_log", "site_documents"])}, max_chars=1500)
    hub.load(strict=True)
    hub.install(strict=True)
    long = _call("site__big_log").content
    assert len(long) < 1700 and "200,000 characters" in long and "MCP_OUTPUT_MAX_CHARS" in long
    sourced = _call("site__site_documents", {"query": "shaft"}).content
    assert registry.parse_sourced(sourced)[0]["url"] == "https://docs.site.example/shaft-2"


def test_a_stdio_server_runs_in_its_own_folder_or_the_session_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "sessions" / "s1"
    hub = _hub(
        tmp_path,
        {"own": _stdio(tools=["where_am_i"]), "ws": _stdio(tools=["where_am_i"], workspace=True)},
    )
    hub.load(strict=True)
    hub.install(strict=True)
    outside = _call("ws__where_am_i")
    assert outside.status == "error" and "session workspace is not available" in outside.content
    workspace_files.set_workspace_resolver(lambda: workspace)
    assert Path(_call("own__where_am_i").content) == (tmp_path / "mcp" / "own").resolve()
    assert Path(_call("ws__where_am_i").content) == workspace.resolve()


def test_two_tools_under_one_name_fail_the_start_naming_both(tmp_path: Path) -> None:
    hub = _hub(tmp_path, {"site": _stdio(env={"SITE_TOOLS_CLASH": "1"})})
    with pytest.raises(McpClash) as clash:
        hub.load(strict=True)
    assert "'read_airflow'" in str(clash.value) and "'read.airflow'" in str(clash.value)
    assert "site__read_airflow" in str(clash.value)
    lenient = _hub(tmp_path, {"site": _stdio(env={"SITE_TOOLS_CLASH": "1"})})
    lenient.load()  # a retry while the app runs: the server is marked down instead
    assert (
        lenient.public()["site"]["status"] == "down" and "read.airflow" in lenient.public()["site"]["reason"]
    )


def test_an_app_without_mcp_servers_never_imports_the_sdk() -> None:
    import subprocess

    code = (
        "import sys, ventapp.agent.agent_set, ventapp.agent.assembly\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'langchain_mcp_adapters')))"
    )
    # The probe imports ventapp from its working folder ("" leads sys.path): this checkout's root,
    # not the caller's folder (elsewhere it found no ventapp, or another checkout's).
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PROJECT_ROOT
    )
    assert out.stdout.strip() == "[]", "the SDK costs over a second of start-up"


def test_keep_alive_reuses_one_session_and_replaces_it_after_a_failure(tmp_path: Path) -> None:
    import os

    hub = _hub(
        tmp_path,
        {
            "live": _stdio(tools=["server_pid", "crash"], keep_alive=True),
            "fresh": _stdio(tools=["server_pid"]),
        },
    )
    hub.load(strict=True)
    hub.install(strict=True)

    async def pids(name: str, count: int) -> list[int]:
        tool = registry.get_spec(name).tool
        return [int(await tool.ainvoke({})) for _ in range(count)]

    async def scenario() -> tuple[list[int], ToolMessage, list[int]]:
        first = await pids("live__server_pid", 3)
        died = await registry.get_spec("live__crash").tool.ainvoke(
            {"name": "live__crash", "args": {}, "id": "c", "type": "tool_call"}
        )
        after = await pids("live__server_pid", 2)
        await hub.aclose()
        return first, died, after

    first, died, after = asyncio.run(scenario())
    assert len(set(first)) == 1, "one process served every call"
    assert died.status == "error" and "stopped answering" in died.content
    assert len(set(after)) == 1 and after[0] != first[0], "a fresh session after the failure"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(after[0], 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("closing the hub ends the kept-alive server process")
    fresh = asyncio.run(pids("fresh__server_pid", 2))
    assert fresh[0] != fresh[1], "without keep_alive every call starts its own process"


def _gone(pid: int) -> bool:
    """True when no process ``pid`` exists, not even a zombie (asyncio reaps the stdio servers)."""
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("keep_alive", [False, True])
def test_a_cancelled_call_returns_at_once_and_closing_the_hub_ends_its_server(
    keep_alive: bool, tmp_path: Path
) -> None:
    # A blocking tool: the server notices its input closing only when the tool ends, so the SDK's
    # stdio shutdown takes its 2 s grace and a SIGTERM; the cancelled caller must not wait for it.
    hub = _hub(tmp_path, {"site": _stdio(tools=["hold", "server_pid"], keep_alive=keep_alive)})
    hub.load(strict=True)
    hub.install(strict=True)
    pid_file = tmp_path / "mcp" / "site" / "hold.pid"

    async def scenario() -> tuple[float, int, bool, int]:
        call = asyncio.create_task(registry.get_spec("site__hold").tool.ainvoke({"seconds": 60}))
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and not call.done(), "the server never ran the slow tool"
            await asyncio.sleep(0.05)
        started = time.monotonic()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        cancelled_in = time.monotonic() - started
        pid = int(pid_file.read_text())
        next_pid = int(await registry.get_spec("site__server_pid").tool.ainvoke({}))
        await hub.aclose()
        return cancelled_in, pid, _gone(pid), next_pid

    cancelled_in, pid, gone, next_pid = asyncio.run(scenario())
    assert cancelled_in < 1.0, f"the cancelled call took {cancelled_in:.2f} s to return"
    assert gone, "closing the hub waited until the stopped call's server process ended"
    assert next_pid != pid, "the next call ran on a new server"
