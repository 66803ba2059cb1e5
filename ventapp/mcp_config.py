"""MCP tool servers (``MCP_SERVERS``): the :class:`McpServer` type and the parsing of the setting.

Only :mod:`ventapp.config` reads the environment; it hands the raw text of ``MCP_SERVERS`` here
(inline JSON/YAML, or the path of a ``.json``/``.yaml``/``.yml`` file). The text is a mapping of
server name to server, optionally under ``mcpServers`` or ``servers``, e.g.::

    MCP_SERVERS='{"site": {"command": "python", "args": ["-m", "site_tools"],
                           "tools": ["read_airflow", "set_fan_speed"],
                           "approval": ["set_fan_speed"], "timeout": 20},
                  "docs": {"url": "http://docs.local:9000/mcp",
                           "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}'

A server with ``command`` runs over stdio (a child process per call), one with ``url`` over
streamable HTTP. ``${VAR}`` in ``env`` and ``headers`` values is expanded here, from the
variables :mod:`ventapp.config` hands over (``.env`` and the process environment, the same one
winning as for our own keys), so tokens need not sit in the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ventapp.config_text import load_document
from ventapp.config_values import as_seconds

KEY = "MCP_SERVERS"
MCP_KEYS: dict[str, tuple[str, str]] = {
    KEY: (
        "",
        "MCP tool servers: a JSON/YAML mapping (or a .json/.yaml file) of name -> {command, args, env, "
        "workspace} (stdio) or {url, headers} (streamable HTTP), each with enabled, tools, approval, timeout",
    ),
    "MCP_OUTPUT_MAX_CHARS": (
        "20000",
        "Longest MCP tool result passed to the model, in characters (cut beyond)",
    ),
    "MCP_RETRY_S": ("30", "Seconds before a down MCP server is tried again (at the next run)"),
}
"""The ``MCP_*`` keys, their defaults and meanings (part of ``config.KEYS``)."""
TRANSPORTS = ("stdio", "streamable_http")
DEFAULT_TIMEOUT_S = 30.0
_VARIABLE = re.compile(r"\$\{([^}]+)\}")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,23}$")
_FIELDS = frozenset(
    {
        "transport",
        "command",
        "args",
        "env",
        "workspace",
        "url",
        "headers",
        "enabled",
        "tools",
        "approval",
        "timeout",
        "keep_alive",
    }
)


@dataclass(frozen=True)
class McpServer:
    """One MCP tool server the agent may call.

    Attributes:
        name: The server's name; its tools reach the model as ``<name>__<tool>``.
        transport: ``stdio`` (a child process) or ``streamable_http``.
        command: Executable of a stdio server, e.g. ``python``.
        args: Its arguments.
        env: Environment of the child process (None: the MCP SDK's safe default subset).
        workspace: True runs a stdio server in the calling session's workspace folder; False
            (default) in an empty folder of its own under ``DATA_DIR/mcp/``, never the host's.
        url: Endpoint of an HTTP server, e.g. ``http://127.0.0.1:9000/mcp``.
        headers: HTTP headers sent with every request (tokens).
        enabled: False keeps the server configured but unused.
        tools: Allow-list of the server's own tool names; empty means every tool it offers.
        approval: The server's tool names a person must approve before each call.
        timeout: Seconds one call (connect, start-up and answer) may take.
        keep_alive: True reuses one session across calls (no process start per stdio call); a
            call that fails on it closes it and the next call opens a fresh one.
    """

    name: str
    transport: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    workspace: bool = False
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    tools: tuple[str, ...] = ()
    approval: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT_S
    keep_alive: bool = False

    def __hash__(self) -> int:
        return hash(self.name)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str | int | float) for item in value):
        raise ValueError(f"{where} must be a list of strings")
    return tuple(str(item) for item in value)


def _mapping(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a mapping of names to strings")
    return {str(k): str(v) for k, v in value.items()}


def _expand(value: str, variables: Mapping[str, str]) -> str:
    """``value`` with each ``${VAR}`` read from ``variables`` (an unknown name stays as written)."""
    return _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), value)


def _server_from(name: object, entry: object, variables: Mapping[str, str]) -> McpServer:
    where = f"{KEY}.{name}"
    if not isinstance(name, str) or not _NAME.match(name) or "__" in name:
        raise ValueError(
            f"{KEY}: server name {name!r} must be 1-24 letters, digits, '-' or single '_' (it prefixes the tool names as <name>__<tool>)"
        )
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be a mapping with command (stdio) or url (streamable HTTP)")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise ValueError(f"{where} has unknown keys {unknown}; known: {', '.join(sorted(_FIELDS))}")
    transport = str(entry.get("transport") or ("streamable_http" if entry.get("url") else "stdio"))
    transport = {"http": "streamable_http", "streamable-http": "streamable_http"}.get(transport, transport)
    if transport not in TRANSPORTS:
        raise ValueError(f"{where}.transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
    command, url = str(entry.get("command") or "").strip(), str(entry.get("url") or "").strip()
    if transport == "stdio" and not command:
        raise ValueError(f"{where}.command is missing: a stdio server needs the program to start")
    if transport == "streamable_http" and not url.startswith(("http://", "https://")):
        raise ValueError(f"{where}.url must be an http(s) URL such as http://127.0.0.1:9000/mcp, got {url!r}")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
        raise ValueError(f"{where}.timeout must be a number of seconds between 0 and 3600, got {timeout!r}")
    for flag in ("enabled", "workspace", "keep_alive"):
        if flag in entry and not isinstance(entry[flag], bool):
            raise ValueError(f"{where}.{flag} must be true or false, got {entry[flag]!r}")
    if transport != "stdio" and entry.get("workspace"):
        raise ValueError(f"{where}.workspace applies to stdio servers only")
    if entry.get("workspace") and entry.get("keep_alive"):
        raise ValueError(
            f"{where}.keep_alive cannot go with workspace: each session's folder needs its own process"
        )
    tools, approval = (
        _strings(entry.get("tools"), f"{where}.tools"),
        _strings(entry.get("approval"), f"{where}.approval"),
    )
    outside = sorted(set(approval) - set(tools)) if tools else []
    if outside:
        raise ValueError(f"{where}.approval names tools left out by {where}.tools: {', '.join(outside)}")
    env = entry.get("env")
    return McpServer(
        name=name,
        transport=transport,
        command=command,
        args=_strings(entry.get("args"), f"{where}.args"),
        env=None
        if env is None
        else {key: _expand(value, variables) for key, value in _mapping(env, f"{where}.env").items()},
        workspace=bool(entry.get("workspace", False)),
        url=url,
        headers={
            key: _expand(value, variables)
            for key, value in _mapping(entry.get("headers"), f"{where}.headers").items()
        },
        enabled=bool(entry.get("enabled", True)),
        tools=tools,
        approval=approval,
        timeout=float(timeout),
        keep_alive=bool(entry.get("keep_alive", False)),
    )


def parse_servers(raw: str, root: Path, variables: Mapping[str, str] | None = None) -> tuple[McpServer, ...]:
    """The servers of ``MCP_SERVERS``: inline JSON/YAML, or the path of a ``.json``/``.yaml``/``.yml`` file.

    Args:
        raw: The setting's text; empty means no MCP servers.
        root: Folder a relative file path is read from (the project root).
        variables: What ``${VAR}`` in ``env`` and ``headers`` values reads (an unknown name stays as written).

    Returns:
        The servers in the order given (disabled ones included, with ``enabled=False``).

    Raises:
        ValueError: Unreadable file, invalid JSON/YAML, not a mapping, a bad entry; the message
            names the key to fix, e.g. ``MCP_SERVERS.site.timeout``.
    """
    data = load_document(raw, KEY, root)
    if data is None:
        return ()
    if isinstance(data, dict) and len(data) == 1 and next(iter(data)) in ("mcpServers", "servers"):
        data = next(iter(data.values()))
    if not isinstance(data, dict):
        raise ValueError(
            f'{KEY} must map server names to servers, e.g. {{"site": {{"command": "python", ...}}}}'
        )
    return tuple(_server_from(name, entry, variables or {}) for name, entry in data.items())


@dataclass(frozen=True)
class McpSettings:
    """The ``MCP_*`` settings.

    Attributes:
        servers: ``MCP_SERVERS``.
        output_max_chars: ``MCP_OUTPUT_MAX_CHARS``: longest tool result the model gets.
        retry_s: ``MCP_RETRY_S``: seconds before a down server is listed again.
    """

    servers: tuple[McpServer, ...] = ()
    output_max_chars: int = 20000
    retry_s: float = 30.0


def parse_mcp(values: Mapping[str, str], root: Path, variables: Mapping[str, str]) -> McpSettings:
    """Build :class:`McpSettings` from the merged configuration values.

    Args:
        values: Key -> raw text for every key of :data:`MCP_KEYS` (defaults already filled in).
        root: Folder a relative ``MCP_SERVERS`` file path is read from.
        variables: What ``${VAR}`` in ``env`` and ``headers`` values reads (``.env`` and the process).

    Raises:
        ValueError: A value is malformed; the message names the key.
    """
    raw_chars = values["MCP_OUTPUT_MAX_CHARS"]
    if not raw_chars.isdigit() or int(raw_chars) < 1000:
        raise ValueError(f"MCP_OUTPUT_MAX_CHARS must be a whole number of at least 1000, got {raw_chars!r}")
    retry_s = as_seconds(values, "MCP_RETRY_S")  # finite only: `inf` would never retry
    return McpSettings(parse_servers(values[KEY], root, variables), int(raw_chars), retry_s)
