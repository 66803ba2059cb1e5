"""A long-lived MCP session for a server whose entry says ``keep_alive: true``.

By default every call opens its own session (a stdio server starts per call), which is what
makes a dead server come back by itself. ``keep_alive`` trades that for speed: one session is
opened at the first call and reused; when a call fails on it (the server died, timed out) it is
closed, and the next call opens a fresh one. The session is owned by a task of the calling
event loop, which enters and leaves the adapters' ``create_session`` context (anyio requires
both in one task); :meth:`LiveSession.close` ends it, and with it a stdio child process.

Ending a session can take seconds: the SDK's ``stdio_client`` closes the server's input, waits up
to 2 s for it to exit, then sends SIGTERM and waits up to 2 s more before SIGKILL. A server busy
in a blocking tool notices nothing before that, so a stopped run that waited for it would close
seconds late. Sessions therefore end in tasks of their own (:func:`in_background`), off the
caller's path; :func:`wait_closed` (``McpHub.aclose``, at shutdown and after a reload) awaits them,
and kills what still runs after :data:`CLOSE_WAIT_S`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult

logger = logging.getLogger(__name__)

CLOSE_WAIT_S = 5.0
"""How long :func:`wait_closed` lets sessions end (the SDK's stdio shutdown takes up to ~4 s)."""
KILL_WAIT_S = 1.0
"""How long it then waits for the cancelled ones (cancelled again, the SDK kills the process)."""

_closing: set[asyncio.Task[Any]] = set()
"""Tasks still ending a session, of any event loop (a strong reference: asyncio keeps weak ones)."""


def _ended(task: asyncio.Task[Any]) -> None:
    _closing.discard(task)
    if not task.cancelled() and (exc := task.exception()) is not None:  # retrieved: no asyncio warning
        logger.debug("an MCP session ended with %r", exc)


def in_background(task: asyncio.Task[Any]) -> None:
    """Keep ``task``, which ends an MCP session, alive until it is done; :func:`wait_closed` awaits it."""
    _closing.add(task)
    task.add_done_callback(_ended)


async def wait_closed(timeout_s: float = CLOSE_WAIT_S) -> None:
    """Wait until the sessions ending on this event loop have ended, up to ``timeout_s`` seconds.

    Those still running then are cancelled again: the SDK's process wrapper then kills a stdio
    server (SIGKILL) and reaps it, so no process outlives the app.
    """
    loop = asyncio.get_running_loop()
    tasks = {task for task in _closing if task.get_loop() is loop}
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=timeout_s)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=KILL_WAIT_S)


class LiveSession:
    """One reusable session to one server.

    Args:
        connection: The adapters' connection settings (see ``mcp_tools.connection``).
    """

    def __init__(self, connection: dict[str, Any]) -> None:
        self.connection = connection
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None

    async def _own(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        from langchain_mcp_adapters.sessions import create_session

        try:
            async with create_session(self.connection) as session:  # type: ignore[arg-type]
                await session.initialize()
                ready.set_result(session)
                await stop.wait()
        except BaseException as exc:  # handed to the caller waiting for the session
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError("session ended"))
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def _open(self) -> ClientSession:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new loop (tests, a worker): the old session belongs to another
            self.close()
            self._loop, self._lock = loop, asyncio.Lock()
        assert self._lock is not None
        async with self._lock:
            if self._session is not None and self._task is not None and not self._task.done():
                return self._session
            ready: asyncio.Future[ClientSession] = loop.create_future()
            self._stop = asyncio.Event()
            self._task = loop.create_task(self._own(ready, self._stop), name="mcp-session")
            self._session = await ready
            return self._session

    async def call(self, mcp_name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call ``mcp_name`` on the open session (opened now if there is none).

        Raises:
            Exception: Whatever opening or calling raised; the session is closed then.
        """
        try:
            session = await self._open()
            return await session.call_tool(mcp_name, arguments)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """End the session in the background (:func:`wait_closed` awaits it); the next call opens a new one."""
        self._session = None
        if self._stop is not None and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._stop = None
        task, self._task = self._task, None
        if task is not None and not task.done() and _on_loop_of(task):
            in_background(task)


def _on_loop_of(task: asyncio.Task[Any]) -> bool:
    # A task of another loop (one that ended: tests, a worker) cannot be tracked from here.
    try:
        return task.get_loop() is asyncio.get_running_loop()
    except RuntimeError:
        return False
