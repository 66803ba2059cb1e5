"""Memory benchmark: the backend's RSS after 100 and 1,000 sequential chats (issue 17 item 13).

Starts the real backend (``reflex run --env prod --backend-only``) on a fresh data folder and
the scripted model in its own process, then sends chats one after another, each in a new
session (``POST /api/chat``, the whole stream read). Prints, for the process serving the
port, RSS (resident memory, from ``/proc/<pid>/status``), open file descriptors and threads
after the warm-up, after 100 and after 1,000 chats, and the growth per chat between 100 and
1,000 (and every further 1,000). A flat figure means nothing is kept per run; the issue
measured ~4.8 KiB per chat.

Run: ``.venv/bin/python -m bench.bench_memory [--chats 1000] [--warmup 20]``. Everything
targets 127.0.0.1; at most 5,000 chats.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.e2e.reflex_app import ReflexApp, free_port
from tests.support import app_env
from ventapp.config import PROJECT_ROOT

MAX_CHATS = 5_000
CHECKPOINTS = (100, 1_000)


def _status(pid: int) -> dict[str, int]:
    fields: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "Threads"):
                fields[key] = int(value.split()[0])
    fields["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return fields


def _group_pids(pgid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid:
                    pids.append(int(entry))
            except (ProcessLookupError, PermissionError):
                continue
    return pids


def _server_pid(pgid: int) -> int:
    """The process of the app's group holding the most memory: the one running the backend."""
    return max(_group_pids(pgid), key=lambda pid: _status(pid).get("VmRSS", 0))


def _chat(client: httpx.Client, index: int) -> None:
    files = {"message": (None, f"hello number {index}"), "user_name": (None, "bench")}
    with client.stream("POST", "/api/chat", files=files) as response:
        if response.status_code != 200:
            raise RuntimeError(f"chat {index} answered {response.status_code}: {response.read()!r}")
        last = ""
        for line in response.iter_lines():
            last = line or last
        if '"type":"done"' not in last:
            raise RuntimeError(f"chat {index} did not end with done: {last[:200]}")


def _report(label: str, pid: int) -> dict[str, int]:
    figures = _status(pid)
    print(
        f"  {label:>16s}: RSS {figures['VmRSS'] / 1024:7.1f} MiB  fds {figures['fds']:4d}  "
        f"threads {figures['Threads']:3d}",
        flush=True,
    )
    return figures


def measure(chats: int, warmup: int, base_url: str) -> None:
    """Run the chats against a fresh backend and print the figures."""
    with tempfile.TemporaryDirectory() as data:
        env = {**app_env(Path(data), base_url), "LOG_LEVEL": "WARNING"}
        with ReflexApp(env, Path(data) / "app.log", backend_only=True) as app:
            assert app._process is not None
            pid = _server_pid(os.getpgid(app._process.pid))
            print(f"backend pid {pid}; {chats} sequential chats, each in a new session")
            with httpx.Client(base_url=app.url, timeout=60) as client:
                for index in range(warmup):
                    _chat(client, -index - 1)
                gc.collect()
                _report(f"after {warmup} warm-up", pid)
                seen: dict[int, dict[str, int]] = {}
                started = time.perf_counter()
                for index in range(1, chats + 1):
                    _chat(client, index)
                    if index in CHECKPOINTS or index % 1_000 == 0 or index == chats:
                        seen[index] = _report(f"after {index}", pid)
                wall = time.perf_counter() - started
            marks = sorted(seen)
            for low, high in itertools.pairwise(marks):
                per_chat = (seen[high]["VmRSS"] - seen[low]["VmRSS"]) / (high - low)
                print(f"  growth {low}→{high}: {per_chat:+.2f} KiB per chat")
            print(f"  {chats / wall:.1f} chats/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=1_000, help="sequential chats to send (max 5,000)")
    parser.add_argument("--warmup", type=int, default=20, help="chats before the first figure")
    args = parser.parse_args()
    llm_port = free_port()
    llm = subprocess.Popen(
        [sys.executable, "-m", "tests.scripted_llm", "--port", str(llm_port)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.5)
        measure(min(args.chats, MAX_CHATS), args.warmup, f"http://127.0.0.1:{llm_port}/v1")
    finally:
        llm.terminate()
        llm.wait(10)


if __name__ == "__main__":
    main()
