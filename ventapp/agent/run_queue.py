"""The queue between a run's producer (the graph) and its consumer (a sink).

It carries contract events, then a :class:`~ventapp.agent.errors.RunFailure` or the end
marker. Token events that are already waiting when the consumer asks for the next item are
joined into one (the contract's ``content`` is appended by every client): a client that is
behind gets fewer, larger frames, and a lone token is never held back (issue 18).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ventapp.agent import events as ev


class RunQueue(asyncio.Queue[Any]):
    """An ``asyncio.Queue`` whose :meth:`next` joins queued tokens. Use one consumer."""

    def __init__(self) -> None:
        super().__init__()
        self._held: Any = None

    async def next(self) -> Any:
        """The next item; a token joined with the tokens queued right behind it.

        Waits only when nothing is queued. The first item after the joined tokens that is
        not a token is kept for the following call, so order is preserved.
        """
        if self._held is not None:
            item, self._held = self._held, None
        else:
            item = await self.get()
        if not isinstance(item, ev.Token) or self.empty():
            return item
        parts = [item.content]
        while not self.empty():
            queued = self.get_nowait()
            if not isinstance(queued, ev.Token):
                self._held = queued
                break
            parts.append(queued.content)
        return item if len(parts) == 1 else ev.Token(content="".join(parts))
