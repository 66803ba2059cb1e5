"""A long-lived MCP session for a server whose entry says ``keep_alive: true``.

By default every call opens its own session (a stdio server starts per call), which is what
makes a dead server come back by itself. ``keep_alive`` trades that for speed: one session is
opened at the first call and reused; when a call fails on it (the server died, timed out) it is
closed, and the next call opens a fresh one. The session is owned by a task of the calling
event loop, which enters and leaves the adapters' ``create_session`` context (anyio requires
both in one task); :meth:`LiveSession.aclose` ends it, and with it a stdio child process.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult

CLOSE_WAIT_S = 5.0
"""How long closing waits for the session (a stdio child process) to end."""


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
        """End the session (its task leaves the context soon after); the next call opens a new one."""
        self._session = None
        if self._stop is not None and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._stop = None

    async def aclose(self) -> None:
        """End the session and wait (up to :data:`CLOSE_WAIT_S`) until it is closed."""
        task = self._task
        self.close()
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, CLOSE_WAIT_S)
