"""Start-up benchmark: seconds from ``make run`` / ``make api`` until the app answers.

Runs the Makefile targets as a user would (set-up checks, migration, ``reflex run``), each
on a free port with a temporary ``DATA_DIR``, and prints the time until the UI is served
(``GET /`` is the chat page) or, for ``make api``, until ``/health`` answers:

* ``make run`` cold — the build stamp removed first, so the production UI is rebuilt (what a
  changed UI, Reflex upgrade or new port costs; ``--fresh`` also deletes ``.web``, the
  first start on a new machine, which installs the frontend's packages);
* ``make run`` warm — started again with nothing changed: the existing build is served;
* ``make api`` — backend only.

Run: ``.venv/bin/python -m bench.bench_startup [--warm 3] [--fresh]``. Everything stays on
127.0.0.1; each server is stopped (its process group) before the next starts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from tests.e2e.reflex_app import free_port
from ventapp.config import PROJECT_ROOT
from ventapp.ui_build import STAMP_NAME

TIMEOUT_S = 900  # a --fresh start installs ~170 MB of npm packages


def _ready(url: str, ui: bool) -> bool:
    try:
        if httpx.get(f"{url}/health", timeout=2).status_code != 200:
            return False
        return not ui or "<html" in httpx.get(f"{url}/", timeout=5).text.lower()
    except httpx.HTTPError:
        return False


def start(target: str, data_dir: Path, port: int, log: Path) -> float:
    """Seconds from ``make <target>`` until it serves (the server is stopped afterwards).

    Raises:
        RuntimeError: The target exited or did not answer within ``TIMEOUT_S``.
    """
    env = {
        **os.environ,
        "DATA_DIR": str(data_dir),
        "DEEP_AGENT_ENV_PRIORITY": "process",
        "LOG_LEVEL": "WARNING",
    }
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    with log.open("ab") as out:
        process = subprocess.Popen(
            ["make", "--no-print-directory", target, f"PORT={port}"],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            while time.perf_counter() - started < TIMEOUT_S:
                if process.poll() is not None:
                    raise RuntimeError(f"make {target} exited with {process.returncode}; see {log}")
                if _ready(url, ui=target == "run"):
                    return time.perf_counter() - started
                time.sleep(0.25)
            raise RuntimeError(f"make {target} did not answer within {TIMEOUT_S} s; see {log}")
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


def main() -> None:
    """Cold and warm ``make run``, then ``make api``; print the seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=3, help="warm starts of make run after the cold one")
    parser.add_argument(
        "--fresh", action="store_true", help="delete .web first (first start on a new machine)"
    )
    args = parser.parse_args()
    web = PROJECT_ROOT / ".web"
    if args.fresh:
        shutil.rmtree(web, ignore_errors=True)
    else:
        (web / STAMP_NAME).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as data:
        log = Path(data) / "make.log"
        port = free_port()  # one port for every start: the port is baked into the UI build
        print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores shared: wall times grow with it)")
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            print(
                "note: PYTHONDONTWRITEBYTECODE is set here, so the app's ~200 modules compile at every start (~0.5 s)"
            )
        cold = start("run", Path(data) / "run", port, log)
        print(f"make run, cold ({'fresh .web' if args.fresh else 'UI rebuilt'}): {cold:6.1f} s")
        warm = [start("run", Path(data) / "run", port, log) for _ in range(args.warm)]
        if warm:
            print(
                f"make run, warm (nothing changed): {statistics.median(warm):6.1f} s median of "
                + ", ".join(f"{value:.1f}" for value in warm)
            )
        api = [start("api", Path(data) / "api", free_port(), log) for _ in range(max(1, args.warm))]
        print(
            f"make api:                         {statistics.median(api):6.1f} s median of "
            + ", ".join(f"{value:.1f}" for value in api)
        )


if __name__ == "__main__":
    main()
