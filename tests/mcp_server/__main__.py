"""A tiny site tool server on the official MCP SDK (``FastMCP``), for the MCP tests and ``make demo``.

Run it over stdio (what an ``MCP_SERVERS`` entry with ``command`` starts)::

    python -m tests.mcp_server stdio

or over streamable HTTP on a port (``url: http://127.0.0.1:PORT/mcp``)::

    python -m tests.mcp_server http PORT

Tools: ``read_airflow`` (a value), ``set_fan_speed`` (a side effect the tests put behind approval),
``site_documents`` (a result with sources), ``big_log`` (200,000 characters), ``wait`` (a slow
answer), ``hold`` (a slow, blocking answer that first notes its process id), ``crash`` (the
process dies mid-call), ``server_pid`` and ``where_am_i`` (its process id and working folder).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
from mcp.server.fastmcp import FastMCP

server = FastMCP(
    "site-tools",
    host="127.0.0.1",
    port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000,
    log_level="WARNING",
    stateless_http=True,  # each request stands alone, as the per-call sessions of the app use it
)


@server.tool()
def read_airflow(airway: str) -> dict:
    """Read the measured airflow of an airway.

    Args:
        airway: Airway id, e.g. "A7".
    """
    return {"airway": airway, "flow_m3s": 42.5}


@server.tool()
def set_fan_speed(fan: str, rpm: int) -> str:
    """Set a main fan's speed (a real side effect on site).

    Args:
        fan: Fan id, e.g. "F1".
        rpm: Target speed in revolutions per minute.
    """
    return f"fan {fan} set to {rpm} rpm"


@server.tool()
def site_documents(query: str) -> dict:
    """Search the site's document store.

    Args:
        query: What to look for.
    """
    return {
        "data": f"Shaft 2 was re-lined in 2024 ({query}).",
        "sources": [
            {"title": "Shaft 2 inspection", "url": "https://docs.site.example/shaft-2", "snippet": "re-lined"}
        ],
    }


@server.tool()
def big_log() -> str:
    """Return the whole monitoring log (very long)."""
    return "x" * 200_000


@server.tool()
async def wait(seconds: float) -> str:
    """Answer after a while.

    Args:
        seconds: How long to wait.
    """
    await anyio.sleep(seconds)
    return "waited"


@server.tool()
def hold(seconds: float) -> str:
    """Note the process id in ``hold.pid`` (working folder), then answer after a while, busy meanwhile.

    The file tells a test that the call is running, and which process to watch. A blocking tool,
    as many site tools are: the server notices nothing (not even its input closing) until it ends.

    Args:
        seconds: How long to wait.
    """
    Path("hold.pid").write_text(str(os.getpid()))
    time.sleep(seconds)
    return "held"


@server.tool()
def crash() -> str:
    """Stop the server process in the middle of the call (for the tests)."""
    sys.stdout.flush()
    os._exit(3)


if os.environ.get("SITE_TOOLS_CLASH") == "1":

    @server.tool(name="read.airflow")
    def read_airflow_dotted(airway: str) -> str:
        """The same reading under a name that becomes read_airflow for the model (a clash).

        Args:
            airway: Airway id.
        """
        return airway


@server.tool()
def server_pid() -> int:
    """The server process's id (tells a reused session from a new one)."""
    return os.getpid()


@server.tool()
def where_am_i() -> str:
    """The server process's working folder."""
    return str(Path.cwd())


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    server.run("streamable-http" if transport == "http" else "stdio")
