"""Throwaway database and Redis servers for tests: Debian's binaries, free ports, temp dirs.

``make servers`` installs the packages (``postgresql``, ``redis-server``, ``mariadb-server``,
``nginx``);
each class here starts one private instance in a fresh temp folder in a second or two and
removes it on :meth:`stop`. Nothing listens beyond 127.0.0.1 and nothing is persisted.

PostgreSQL refuses to run as root. When the tests run as root (CI containers, this machine),
``initdb`` and ``postgres`` run as the unprivileged user ``nobody`` through ``runuser``; the data
folder is created under ``/tmp`` (reachable by that user) and handed to it. MariaDB runs as
root with ``--user=root``, which it allows.

Use through the session fixtures in ``tests/conftest.py`` (``postgres_server``,
``mariadb_server``, ``redis_server``): a server starts only when a test asks for it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")
NGINX = "/usr/sbin/nginx"
UNPRIVILEGED_USER = "nobody"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_port(port: int, process: subprocess.Popen[bytes] | None, timeout_s: float, name: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{name} did not listen on port {port} within {timeout_s} s")


def _terminate(process: subprocess.Popen[bytes] | None, grace_s: float) -> None:
    """SIGTERM ``process`` if it runs; SIGKILL it after ``grace_s`` seconds."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def available(kind: str) -> bool:
    """Whether the binaries of ``kind`` (``postgres``, ``redis``, ``mariadb``) are installed."""
    if kind == "postgres":
        return (PG_BIN / "initdb").exists()
    if kind == "redis":
        return shutil.which("redis-server") is not None
    if kind == "mariadb":
        return shutil.which("mariadbd") is not None or Path("/usr/sbin/mariadbd").exists()
    if kind == "nginx":
        return Path(NGINX).exists()
    raise ValueError(kind)


class PostgresServer:
    """A private PostgreSQL 15 cluster (trust auth, fsync off) on a free port.

    Attributes:
        port: Its TCP port on 127.0.0.1.
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="vent-pg-", dir="/tmp"))
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, UNPRIVILEGED_USER)
            self._as_user = ["runuser", "-u", UNPRIVILEGED_USER, "--"]

    def start(self) -> PostgresServer:
        """Initialise (first time) and start the cluster; returns when it accepts connections."""
        data = self.dir / "data"
        if not data.exists():
            subprocess.run(
                [*self._as_user, str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres",
                 "-A", "trust", "-E", "UTF8", "--no-sync"],
                check=True, capture_output=True, cwd=self.dir,
            )  # fmt: skip
        options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        )
        subprocess.run(
            [*self._as_user, str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options,
             "-l", str(self.dir / "log"), "-w", "-t", "30", "start"],
            check=True, capture_output=True, cwd=self.dir,
        )  # fmt: skip
        return self

    def stop(self, *, remove: bool = True) -> None:
        """Stop the cluster (fast mode); remove its folder unless ``remove`` is False."""
        data = self.dir / "data"
        if data.exists():
            subprocess.run(
                [*self._as_user, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                capture_output=True, cwd=self.dir,
            )  # fmt: skip
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database; returns its SQLAlchemy URL (``postgresql+psycopg://``)."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"


class MariaDBServer:
    """A private MariaDB on a free port; its ``app`` user's password holds a ``%`` on purpose.

    Attributes:
        port: Its TCP port on 127.0.0.1.
    """

    USER = "app"
    PASSWORD = "p%25w%40rd"  # URL-encoded: the real password is "p%w@rd"
    RAW_PASSWORD = "p%w@rd"

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="vent-maria-", dir="/tmp"))
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def socket_path(self) -> Path:
        """The server's unix socket (root logs in over it without a password)."""
        return self.dir / "mysqld.sock"

    def start(self) -> MariaDBServer:
        """Initialise (first time) and start the server; returns when it listens."""
        data = self.dir / "data"
        first = not data.exists()
        if first:
            subprocess.run(
                ["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=root",
                 "--auth-root-authentication-method=normal", "--skip-test-db"],
                check=True, capture_output=True, cwd=self.dir,
            )  # fmt: skip
        self._process = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={data}", "--user=root", f"--port={self.port}",
             "--bind-address=127.0.0.1", f"--socket={self.socket_path}", f"--pid-file={self.dir / 'pid'}",
             "--skip-log-bin", "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0",
             "--max-connections=300", f"--log-error={self.dir / 'error.log'}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir,
        )  # fmt: skip
        _wait_port(self.port, self._process, 30, "mariadbd")
        if first:
            self._root_sql(
                f"CREATE USER '{self.USER}'@'%' IDENTIFIED BY '{self.RAW_PASSWORD}';"
                f"GRANT ALL PRIVILEGES ON *.* TO '{self.USER}'@'%';"
            )
        return self

    def _root_sql(self, sql: str) -> None:
        import pymysql

        conn = pymysql.connect(unix_socket=str(self.socket_path), user="root", autocommit=True)
        try:
            with conn.cursor() as cursor:
                for statement in filter(None, (part.strip() for part in sql.split(";"))):
                    cursor.execute(statement)
        finally:
            conn.close()

    def stop(self, *, remove: bool = True) -> None:
        """Stop the server; remove its folder unless ``remove`` is False."""
        _terminate(self._process, 20)
        self._process = None
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (server default charset); returns its ``mysql+pymysql://`` URL."""
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        self._root_sql(f"CREATE DATABASE `{name}`")
        return f"mysql+pymysql://{self.USER}:{self.PASSWORD}@127.0.0.1:{self.port}/{name}"


class RedisServer:
    """A private ``redis-server`` (no persistence) on a free port; :meth:`stop` + :meth:`start` keep the port.

    Attributes:
        port: Its TCP port on 127.0.0.1.
        url: ``redis://127.0.0.1:<port>/0``.
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="vent-redis-"))
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The URL clients use."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start the server; returns when it listens."""
        self._process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir), "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir,
        )  # fmt: skip
        _wait_port(self.port, self._process, 15, "redis-server")
        return self

    def stop(self, *, remove: bool = True) -> None:
        """Stop the server (its data goes with it); remove its folder unless ``remove`` is False."""
        _terminate(self._process, 10)
        self._process = None
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)


class NginxServer:
    """A private nginx (Debian's) in the foreground with a temp prefix, pid and logs.

    As root its master runs as ``nobody`` (``runuser``), like PostgreSQL here: unprivileged, on a
    port above 1024. ``access.log`` in its folder names the upstream of every proxied request.

    Args:
        http_config: What goes inside the ``http { }`` block (upstreams, maps, servers).
        port: The port its ``server`` listens on (for :meth:`start` to wait for).
    """

    def __init__(self, http_config: str, port: int) -> None:
        self.port = port
        self.dir = Path(tempfile.mkdtemp(prefix="vent-nginx-", dir="/tmp"))
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, UNPRIVILEGED_USER)
            self._as_user = ["runuser", "-u", UNPRIVILEGED_USER, "--"]
        temp = "\n".join(
            f"    {kind}_temp_path {self.dir / kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        self.config = self.dir / "nginx.conf"
        self.config.write_text(
            f"""worker_processes 1;
daemon off;
pid {self.dir / "nginx.pid"};
error_log {self.dir / "error.log"} warn;
events {{ worker_connections 512; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format upstream '$request_method $uri $status $upstream_addr';
    access_log {self.dir / "access.log"} upstream;
{temp}
{http_config}
}}
"""
        )
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def access_log(self) -> str:
        """The access log so far: ``METHOD URI STATUS UPSTREAM`` per line."""
        path = self.dir / "access.log"
        return path.read_text() if path.exists() else ""

    def start(self) -> NginxServer:
        """Check the configuration and start; returns when it listens.

        Raises:
            RuntimeError: The configuration is refused (nginx's message attached), or it did not listen.
        """
        command = [
            *self._as_user,
            NGINX,
            "-p",
            str(self.dir),
            "-c",
            str(self.config),
            "-e",
            str(self.dir / "error.log"),
        ]
        checked = subprocess.run([*command, "-t"], capture_output=True, text=True, cwd=self.dir)
        if checked.returncode != 0:
            raise RuntimeError(f"nginx refused its configuration: {checked.stderr}")
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir
        )
        _wait_port(self.port, self._process, 15, "nginx")
        return self

    def stop(self, *, remove: bool = True) -> None:
        """Stop it (SIGTERM: fast shutdown); remove its folder unless ``remove`` is False."""
        _terminate(self._process, 10)
        self._process = None
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)
