"""The scripted model server in its own process, for the benchmarks (never the tests' fixture)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.e2e.reflex_app import free_port
from ventapp.config import PROJECT_ROOT

READY_TIMEOUT_S = 30


@contextmanager
def scripted_model(delay_ms: int = 0) -> Iterator[str]:
    """Run ``python -m tests.scripted_llm`` on a free port until the block ends.

    Args:
        delay_ms: Pause between streamed chunks (0: as fast as it can).

    Yields:
        The OpenAI-compatible base URL (``http://127.0.0.1:<port>/v1``), once it answers.

    Raises:
        RuntimeError: The server did not answer within ``READY_TIMEOUT_S`` seconds.
    """
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.scripted_llm", "--port", str(port), "--delay-ms", str(delay_ms)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the scripted model server did not start")
            time.sleep(0.2)
        yield base_url
    finally:
        server.terminate()
        server.wait(10)
