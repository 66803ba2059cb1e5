"""Runs the whole Reflex app (``reflex run --env prod --single-port``) as a subprocess for browser tests.

The UI is started through :mod:`ventapp.ui_build`, like ``make run``: its production build
(page compilation + Vite, a minute or more on CI) is made by the first module that needs it
and reused by the others, as long as the fingerprint is unchanged. The bundle has the
backend's port baked in, so every UI app of a test session listens on the same port — picked
free once, and picked again only if something else took it meanwhile (then the UI is rebuilt).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

from ventapp.config import PROJECT_ROOT

NODE_BIN = PROJECT_ROOT / ".tools" / "node_modules" / ".bin"
START_TIMEOUT_S = 420  # a first run installs ~170 MB of npm packages into .web and builds


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def can_bind(port: int) -> bool:
    """True when the app's server could bind ``port`` on loopback now (``SO_REUSEADDR``, as it does)."""
    with socket.socket() as sock:
        # As the app's server binds: a port whose last connections linger in TIME_WAIT is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


_ui_port: int | None = None


def ui_port() -> int:
    """The port every UI app of this test session listens on (free now), so one UI build serves them all."""
    global _ui_port
    if _ui_port is None or not can_bind(_ui_port):
        _ui_port = free_port()
    return _ui_port


class ReflexApp:
    """The app on a free port with the given settings; ``url`` once started. Logs go to ``log_path``."""

    def __init__(self, env: dict[str, str], log_path: Path, *, backend_only: bool = False) -> None:
        self.backend_only = backend_only
        self.exit_code: int | None = None
        self.port = free_port() if backend_only else ui_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.env = {
            **os.environ,
            **env,
            "PORT": str(self.port),
            "PATH": f"{NODE_BIN}:{PROJECT_ROOT / '.venv' / 'bin'}:{os.environ.get('PATH', '')}",
            "REFLEX_USE_NPM": "1",
            "REFLEX_TELEMETRY_ENABLED": "false",
            "REFLEX_CHECK_LATEST_VERSION": "0",
        }
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ReflexApp:
        port = str(self.port)
        options = ["run", "--env", "prod", "--loglevel", "warning"]
        if self.backend_only:
            command = [str(PROJECT_ROOT / ".venv" / "bin" / "reflex"), *options]
            command += ["--backend-only", "--backend-port", port]
        else:
            # Built only when it changed (the fingerprint), like `make run`.
            command = [str(PROJECT_ROOT / ".venv" / "bin" / "python"), "-m", "ventapp.ui_build", *options]
            command += ["--single-port", "--frontend-port", port, "--backend-port", port]
        log = self.log_path.open("wb")
        self._process = subprocess.Popen(
            command,
            cwd=PROJECT_ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"reflex exited early:\n{self.log_path.read_text()[-3000:]}")
            try:
                healthy = httpx.get(f"{self.url}/health", timeout=2).status_code == 200
                if healthy and (self.backend_only or httpx.get(self.url, timeout=5).status_code == 200):
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(1)
        self.__exit__()
        raise RuntimeError(
            f"reflex did not start in {START_TIMEOUT_S}s:\n{self.log_path.read_text()[-3000:]}"
        )

    def stop(self, timeout_s: float = 30) -> int | None:
        """SIGTERM the app and wait; returns its exit code, or None if it had to be killed."""
        self.__exit__(timeout_s)
        return self.exit_code

    def __exit__(self, *exc: object) -> None:
        if self._process is None:
            return
        timeout_s = exc[0] if exc and isinstance(exc[0], int | float) else 30
        try:
            os.killpg(self._process.pid, signal.SIGTERM)
            self.exit_code = self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait(10)
        except ProcessLookupError:
            pass
        self._process = None
