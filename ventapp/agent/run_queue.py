"""The queue between a run's producer (the graph) and its consumer (a sink).

It carries contract events, then a :class:`~ventapp.agent.errors.RunFailure` or the end
marker. Token events that are already waiting when the consumer asks for the next item are
joined into one (the contract's ``content`` is appended by every client): a client that is
behind gets fewer, larger frames, and a lone token is never held back (issue 18).

One producer, one consumer, no bound: a deque and the consumer's one waiting future. Every token
passes through here; ``asyncio.Queue``'s general machinery (any number of getters and putters, a
size bound, task accounting) cost twice as much per token (a profile of 20 concurrent runs).
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from ventapp.agent import events as ev


class RunQueue:
    """A FIFO whose :meth:`next` joins queued tokens. One consumer; ``put_nowait`` from the loop."""

    def __init__(self) -> None:
        self._items: collections.deque[Any] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Any) -> None:
        """Queue ``item``; the consumer waiting in :meth:`next` wakes up."""
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def empty(self) -> bool:
        """Nothing is queued."""
        return not self._items

    async def next(self) -> Any:
        """The next item; a token joined with the tokens queued right behind it.

        Waits only when nothing is queued. The first item after the joined tokens that is
        not a token stays first in line, so order is preserved.

        Raises:
            RuntimeError: Another call is already waiting (one consumer only).
        """
        items = self._items
        while not items:
            if self._waiter is not None:
                raise RuntimeError("RunQueue has one consumer")
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = items.popleft()
        if not isinstance(item, ev.Token) or not items or not isinstance(items[0], ev.Token):
            return item
        parts = [item.content]
        while items and isinstance(items[0], ev.Token):
            parts.append(items.popleft().content)
        return ev.Token(content="".join(parts))
