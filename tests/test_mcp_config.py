"""``MCP_SERVERS``: named stdio / streamable HTTP servers as JSON, YAML or a file (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ventapp.config import load_settings
from ventapp.mcp_config import parse_servers

_YAML = """\
mcpServers:
  site:
    command: python
    args: [-m, site_tools]
    env: {TOKEN: "${SITE_TOKEN}"}
    tools: [read_airflow, set_fan_speed]
    approval: [set_fan_speed]
    timeout: 12
  docs:
    url: http://docs.local:9000/mcp
    headers: {Authorization: Bearer x}
    enabled: false
"""


def test_json_yaml_and_file_spellings_give_the_same_servers(tmp_path: Path) -> None:
    as_json = (
        '{"site": {"command": "python", "args": ["-m", "site_tools"], "env": {"TOKEN": "${SITE_TOKEN}"}, '
        '"tools": ["read_airflow", "set_fan_speed"], "approval": ["set_fan_speed"], "timeout": 12}, '
        '"docs": {"url": "http://docs.local:9000/mcp", "headers": {"Authorization": "Bearer x"}, "enabled": false}}'
    )
    (tmp_path / "mcp.yaml").write_text(_YAML)
    parsed = [parse_servers(text, tmp_path) for text in (as_json, _YAML, "mcp.yaml")]
    assert parsed[0] == parsed[1] == parsed[2]
    site, docs = parsed[0]
    assert (site.name, site.transport, site.args, site.approval, site.timeout, site.workspace) == (
        "site",
        "stdio",
        ("-m", "site_tools"),
        ("set_fan_speed",),
        12.0,
        False,
    )
    assert site.env == {"TOKEN": "${SITE_TOKEN}"}, "no such variable given: stays as written"
    assert (docs.transport, docs.enabled, docs.headers) == (
        "streamable_http",
        False,
        {"Authorization": "Bearer x"},
    )


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"a": {"url": "ftp://x"}}', "MCP_SERVERS.a.url"),
        ('{"a": {"command": "x", "timeout": 0}}', "MCP_SERVERS.a.timeout"),
        ('{"a": {"command": "x", "timeout": "soon"}}', "MCP_SERVERS.a.timeout"),
        ('{"a": {"transport": "stdio"}}', "MCP_SERVERS.a.command"),
        ('{"a": {"command": "x", "transport": "pigeon"}}', "MCP_SERVERS.a.transport"),
        ('{"a": {"command": "x", "cwd": "/"}}', "MCP_SERVERS.a has unknown keys ['cwd']"),
        ('{"a": {"url": "http://h/mcp", "workspace": true}}', "MCP_SERVERS.a.workspace"),
        ('{"a": {"command": "x", "enabled": "yes"}}', "MCP_SERVERS.a.enabled"),
        ('{"a": {"command": "x", "workspace": true, "keep_alive": true}}', "MCP_SERVERS.a.keep_alive"),
        ('{"a": {"command": "x", "tools": "read"}}', "MCP_SERVERS.a.tools"),
        ('{"a": {"command": "x", "tools": ["t"], "approval": ["u"]}}', "MCP_SERVERS.a.approval"),
        ('{"a__b": {"command": "x"}}', "server name 'a__b'"),
        ('[{"command": "x"}]', "MCP_SERVERS must map"),
        ("{not json: [", "neither valid JSON nor YAML"),
        ("missing.yaml", "cannot be read"),
    ],
)
def test_a_bad_entry_fails_the_start_naming_the_key(text: str, key: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="MCP_SERVERS") as error:
        load_settings({"DEEP_AGENT_ENV_PRIORITY": "none", "MCP_SERVERS": text}, env_file=tmp_path / "none")
    assert key in str(error.value)


def test_header_tokens_come_from_the_environment(tmp_path: Path) -> None:
    text = '{"docs": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X": "${NOPE}"}}}'
    env = {"DEEP_AGENT_ENV_PRIORITY": "none", "MCP_SERVERS": text, "DOCS_TOKEN": "abc"}
    (docs,) = load_settings(env, env_file=tmp_path / "none").mcp.servers
    assert docs.headers == {"Authorization": "Bearer abc", "X": "${NOPE}"}


def test_tokens_in_env_and_headers_come_from_the_dotenv_file_too(tmp_path: Path) -> None:
    """Found by trying it: ``SITE_TOKEN`` in ``.env`` reached the server as the literal ``${SITE_TOKEN}``."""
    text = (
        '{"site": {"command": "python", "env": {"TOKEN": "${SITE_TOKEN}"}},'
        ' "docs": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}'
    )
    (tmp_path / "mcp.json").write_text(text)
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"MCP_SERVERS={tmp_path / 'mcp.json'}\nSITE_TOKEN=from-file\nDOCS_TOKEN=file-docs\n")
    process = {"DEEP_AGENT_ENV_PRIORITY": "dotenv", "DOCS_TOKEN": "process-docs"}
    site, docs = load_settings(process, env_file=dotenv).mcp.servers
    assert site.env == {"TOKEN": "from-file"}
    assert docs.headers == {"Authorization": "Bearer file-docs"}, (
        ".env wins under DEEP_AGENT_ENV_PRIORITY=dotenv"
    )
    site, docs = load_settings({**process, "DEEP_AGENT_ENV_PRIORITY": "process"}, env_file=dotenv).mcp.servers
    assert docs.headers == {"Authorization": "Bearer process-docs"}


def test_defaults_run_without_set_up(tmp_path: Path) -> None:
    settings = load_settings({"DEEP_AGENT_ENV_PRIORITY": "none"}, env_file=tmp_path / "none")
    assert (settings.mcp.servers, settings.mcp.output_max_chars, settings.mcp.retry_s) == ((), 20000, 30.0)
