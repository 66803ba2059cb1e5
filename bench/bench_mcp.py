"""Time MCP tool calls through the agent's tool wrapper: stdio and streamable HTTP (prints figures).

    .venv/bin/python -m bench.bench_mcp [--calls 10]

Each call opens its own session (a stdio server is started per call; an HTTP server is reached
per call), which is what makes a dead server come back without a restart; this shows its price,
next to a stdio server with ``keep_alive: true`` (one session reused; ``kept``).
The server is the tiny site server under ``tests/mcp_server`` (``read_airflow``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tests.mcp_server import SERVER_FILE, HttpMcpServer
from ventapp.mcp_config import parse_servers
from ventapp.tools import registry
from ventapp.tools.mcp_hub import McpHub
from ventapp.tools.mcp_tools import MODULE_PREFIX


async def _time_calls(name: str, calls: int, hub: McpHub) -> list[float]:
    spec = registry.get_spec(name)
    assert spec is not None
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await spec.tool.ainvoke({"airway": "A7"})
        times.append((time.perf_counter() - started) * 1000)
    await hub.aclose()  # the kept-alive session lives on this loop
    return times


def main() -> None:
    """Print the per-call latency (ms) of each transport."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=10)
    calls = parser.parse_args().calls
    with HttpMcpServer() as web, tempfile.TemporaryDirectory() as home:
        servers = {
            "stdio": {
                "command": sys.executable,
                "args": [str(SERVER_FILE), "stdio"],
                "tools": ["read_airflow"],
            },
            "http": {"url": web.url, "tools": ["read_airflow"]},
            "kept": {
                "command": sys.executable,
                "args": [str(SERVER_FILE), "stdio"],
                "tools": ["read_airflow"],
                "keep_alive": True,
            },
        }
        hub = McpHub(parse_servers(json.dumps(servers), Path(home)), Path(home), 20000, 30)
        started = time.perf_counter()
        hub.load(strict=True)
        print(f"listing both servers: {(time.perf_counter() - started) * 1000:.0f} ms")
        hub.install(strict=True)
        for transport in ("stdio", "http", "kept"):
            times = asyncio.run(_time_calls(f"{transport}__read_airflow", calls, hub))
            print(
                f"{transport:5s} {calls} calls: median {statistics.median(times):.0f} ms, "
                f"min {min(times):.0f} ms, max {max(times):.0f} ms (first {times[0]:.0f} ms)"
            )
        registry.remove_specs(MODULE_PREFIX)


if __name__ == "__main__":
    main()
