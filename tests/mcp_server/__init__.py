"""A tiny MCP tool server for the tests (the official ``mcp`` SDK's FastMCP), over stdio or HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

SERVER_FILE = Path(__file__).with_name("__main__.py")
"""Run it as a script (``python SERVER_FILE stdio``): a stdio server starts in a folder of its own."""


def free_port() -> int:
    """A loopback port nothing listens on (right now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HttpMcpServer:
    """The site server over streamable HTTP in a child process (``with HttpMcpServer(port) as s:``)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> HttpMcpServer:
        """Start the process and wait (up to 20 s) until it accepts connections."""
        self.process = subprocess.Popen([sys.executable, str(SERVER_FILE), "http", str(self.port)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the MCP test server exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the MCP test server did not start listening")

    def stop(self) -> None:
        """Stop the process (if it still runs)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def __enter__(self) -> HttpMcpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
