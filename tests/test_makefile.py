"""The Makefile's ``demo`` target: where its data goes, and how Ctrl-C ends it.

The app is replaced (``REFLEX_RUN``) by a small script that records the environment it got and
stops on SIGINT as Reflex does; the demo model is the real scripted server. Ctrl-C is what a
terminal sends: SIGINT to the whole foreground process group (make, its shell, both servers).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAKE_APP = """
import os, signal, sys, time
from pathlib import Path


def stop(signum, _frame):
    Path(os.environ["FAKE_APP_OUT"] + ".stopped").write_text(signal.Signals(signum).name)
    time.sleep(1.0)  # Reflex takes a moment to shut down: the demo model is gone by then
    sys.exit(0)


Path(os.environ["FAKE_APP_OUT"]).write_text(os.environ.get("DATA_DIR", ""))
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
print("fake app up", flush=True)
signal.pause()
"""

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _demo(tmp_path: Path, *assignments: str, term: bool = False) -> tuple[str, str, int]:
    """Run ``make demo`` with the fake app, press Ctrl-C once both servers are up (``term``: send
    SIGTERM to make alone instead, as a process manager or ``kill`` does).

    Returns:
        (what make printed, the DATA_DIR the app got, make's return code).
    """
    script, out = tmp_path / "fake_app.py", tmp_path / "app_env.txt"
    script.write_text(FAKE_APP)
    llm_port = _free_port()
    command = [
        "make",
        "--no-print-directory",
        "-o",
        "serve-setup",  # the shared venv is set up already: no pip run from a test
        "demo",
        f"DEMO_LLM_PORT={llm_port}",
        f"PORT={_free_port()}",
        "HOST=127.0.0.1",
        f"REFLEX_RUN={sys.executable} {script}",
        *assignments,
    ]
    env = {**os.environ, "FAKE_APP_OUT": str(out)}
    env.pop("DATA_DIR", None)
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        any("fake app up" in line for line in lines) and any("listening" in line for line in lines)
    ):
        line = proc.stdout.readline().decode(errors="replace")
        if not line and proc.poll() is not None:
            break
        lines.append(line)
    try:
        if term:
            proc.send_signal(signal.SIGTERM)  # `kill <make's pid>`: make passes it to its recipe's shell
        else:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the terminal
        rest, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for _ in range(50):  # the demo model is stopped with the app
        if _port_free(llm_port):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the demo model still listens on {llm_port} after Ctrl-C")
    printed = "".join(lines) + rest.decode(errors="replace")
    return printed, out.read_text() if out.exists() else "", proc.returncode


def test_demo_honours_data_dir_and_ends_quietly_on_ctrl_c(tmp_path: Path) -> None:
    printed, data_dir, _ = _demo(tmp_path, f"DATA_DIR={tmp_path / 'demo-data'}")

    assert data_dir == str(tmp_path / "demo-data"), printed
    assert "No such process" not in printed and "make: ***" not in printed, printed


def test_demo_keeps_its_data_apart_by_default(tmp_path: Path) -> None:
    printed, data_dir, _ = _demo(tmp_path)

    assert data_dir == "data/demo", printed
    assert "No such process" not in printed and "make: ***" not in printed, printed


def test_demo_stops_on_sigterm_to_make(tmp_path: Path) -> None:
    """try11: `kill -TERM` of `make demo` left make, the app and the demo model running."""
    printed, data_dir, code = _demo(tmp_path, term=True)

    assert data_dir == "data/demo", printed
    assert (tmp_path / "app_env.txt.stopped").read_text() == "SIGTERM", "the app was told to stop"
    assert code == -signal.SIGTERM, "make itself ends by the signal it was sent, as GNU make does"
