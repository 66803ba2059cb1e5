"""A bad setting stops the start with one line naming the key, not a traceback (tester #9, try12).

``make api`` is ``reflex run --backend-only``, ``make run`` is ``python -m ventapp.ui_build run``:
both read the settings through ``rxconfig.py``, which checks ``HITL_TOOLS`` against the built-in
tools too (an MCP server's tool is checked when the runtime builds the agent, in the server's lifespan).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ventapp.config import PROJECT_ROOT

REFLEX = str(Path(sys.executable).parent / "reflex")
MAKE_API = [REFLEX, "run", "--env", "prod", "--backend-only", "--backend-port", "{port}"]
MAKE_RUN = [sys.executable, "-m", "ventapp.ui_build", "run", "--env", "prod", "--single-port",
            "--frontend-port", "{port}", "--backend-port", "{port}"]  # fmt: skip


def _start(command: list[str], port: int, tmp_path: Path, **settings: str) -> tuple[int, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("REFLEX_", "GRANIAN_"))}
    env = {**base, "DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(tmp_path), **settings}
    done = subprocess.run(
        [part.format(port=port) for part in command],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("CONTEXT_LIMIT", "abc", "whole number"),
        ("AUTH_MODE", "bogus", "none, local, header"),
        ("TFAGENTS_DAILY_TOKEN_LIMIT", "-5", "at least 0"),
        ("AUTH_NONE_OPERATORS", "team/lead", "team/lead"),
        ("DATABASE_URL", "foo://admin:s3cret@db/x", "got a 'foo' one"),
        ("OPENAI_BASE_URL", "localhost:8000/v1", "http:// or https://"),
        ("DATABASE_URL", "postgresql://admin:s3cret@127.0.0.1:99999/x", "port must be a number"),
        ("RUN_TIMEOUT_S", "nan", "must be a positive number of seconds, got 'nan'"),  # try19
    ],
)
def test_a_bad_setting_is_one_line_naming_the_key(tmp_path: Path, key: str, value: str, words: str) -> None:
    code, output = _start(MAKE_API, 9611, tmp_path, **{key: value})
    lines = [line for line in output.splitlines() if line.strip()]
    assert code != 0 and "Traceback" not in output and len(lines) <= 3, output
    assert any(key in line and words in line for line in lines), output
    assert "s3cret" not in output, "a database URL's password is never printed"


def test_make_run_says_it_in_one_line_too(tmp_path: Path) -> None:
    code, output = _start(MAKE_RUN, 9612, tmp_path, CONTEXT_LIMIT="abc")
    lines = [line for line in output.splitlines() if line.strip()]
    assert code != 0 and "Traceback" not in output and len(lines) <= 3, output
    assert any("CONTEXT_LIMIT" in line and "'abc'" in line for line in lines), output


def test_an_unknown_hitl_tool_stops_the_server_before_its_banner(tmp_path: Path) -> None:
    """Tester: ``HITL_TOOLS=nosuch`` printed its line after "App running at:" (and a worker's
    "[ERROR] Unexpected exit"), where operators miss it; like every other bad setting it is the
    one line the start prints."""
    code, output = _start(MAKE_API, 9613, tmp_path, HITL_TOOLS="nosuchtool")
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and "Traceback" not in output and len(lines) <= 3, output
    assert "App running" not in output and "Unexpected exit" not in output, output
    assert any("HITL_TOOLS" in line and "nosuchtool" in line for line in lines), output


def test_the_start_leaves_a_configured_mcp_servers_tool_to_the_agents_build(tmp_path: Path) -> None:
    """``<server>__<tool>`` of a configured server is known only once the server is listed."""
    from ventapp.agent.hitl_names import check_hitl_tools_at_start
    from ventapp.config import load_settings

    base = {"DATA_DIR": str(tmp_path), "DEEP_AGENT_ENV_PRIORITY": "none"}
    mcp = {**base, "MCP_SERVERS": '{"docs": {"command": "true"}}'}
    check_hitl_tools_at_start(load_settings({**mcp, "HITL_TOOLS": "calculate,ls,docs__search"}))
    for names in ("docs__search,nosuch", "other__search", "execute"):  # execute: the agent never has it
        with pytest.raises(SystemExit) as stopped:
            check_hitl_tools_at_start(load_settings({**mcp, "HITL_TOOLS": names}))
        assert stopped.value.code == 2


def test_a_database_server_that_is_not_there_stops_the_start_in_one_line(tmp_path: Path) -> None:
    """try14: a wrong port printed a 171–335-line traceback (the driver's, twice); try16: its line
    came after "App running at:" and a worker's "Unexpected exit"."""
    with socket.socket() as probe:  # a port nothing listens on: connections are refused at once
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    url = f"postgresql://vent:s3cret@127.0.0.1:{closed}/vent"
    code, output = _start(MAKE_API, 9614, tmp_path, DATABASE_URL=url)
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and "Traceback" not in output and len(lines) <= 3, output
    assert "App running" not in output and "Unexpected exit" not in output, output
    line = next(line for line in output.splitlines() if "DATABASE_URL" in line)
    assert f"could not connect to postgresql://vent@127.0.0.1:{closed}/vent" in line, output
    assert "Connection refused" in line and "s3cret" not in output
