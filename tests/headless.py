"""A browser tab without a browser: drives the real Reflex event processor on one token.

The page tests run ``BaseStateEventProcessor`` with ``StateManagerMemory`` and fire the events a
page's components would; :class:`HeadlessTab` is one tab of it. A page's test names its state
(``page_state``) so that ``fire``/``state`` read like the page.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from reflex.event import Event
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex.state import BaseState, State
from reflex_base.event.processor import BaseStateEventProcessor
from reflex_base.utils.format import format_event_handler

from ventapp.agent.runtime import AgentRuntime, set_runtime
from ventapp.config import Settings

S = TypeVar("S", bound=BaseState)

NOWHERE = "http://127.0.0.1:9/v1"
"""A model endpoint where nothing listens: the runtime's probe finds nothing and nothing is sent."""
MODEL_NOWHERE = {"OPENAI_BASE_URL": NOWHERE, "OPENAI_API_KEY": "x", "MODEL_NAME": "scripted-demo"}
"""Settings of a configured main model at :data:`NOWHERE` (the header names ``scripted-demo``)."""


def page_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """Settings keys of a runtime for page tests: no ``.env`` read, ``DATA_DIR`` = ``data_dir``,
    checkpoints in memory; ``extra`` on top (``MODELS``, ``**MODEL_NOWHERE``…)."""
    return {"DEEP_AGENT_ENV_PRIORITY": "none", "DATA_DIR": str(data_dir), "CHECKPOINTER": "memory", **extra}


class HeadlessTab(Generic[S]):
    """One browser tab: a token on ``processor``, firing events and reading states.

    Attributes:
        page_state: The state :meth:`fire` and :meth:`state` use (set by a page's subclass).
    """

    page_state: ClassVar[type[BaseState]]

    def __init__(self, processor: BaseStateEventProcessor) -> None:
        self.processor = processor
        self.token = uuid.uuid4().hex

    async def fire_on(self, state_cls: type[BaseState], name: str, **payload: Any) -> list[Any]:
        """Fire ``state_cls``'s event handler ``name``; the state deltas it produced."""
        event = Event(name=format_event_handler(state_cls.event_handlers[name]), payload=payload)
        return [delta async for delta in self.processor.enqueue_stream_delta(self.token, event)]

    async def fire(self, name: str, **payload: Any) -> list[Any]:
        """Fire the page state's event handler ``name``."""
        return await self.fire_on(self.page_state, name, **payload)

    async def get(self, state_cls: type[Any]) -> Any:
        """This tab's instance of ``state_cls``."""
        manager = self.processor._root_context.state_manager  # type: ignore[union-attr]  # configured by the caller
        root = await manager.get_state(BaseStateToken(ident=self.token, cls=State))
        return await root.get_state(state_cls)

    async def state(self) -> S:
        """This tab's page state."""
        return await self.get(self.page_state)  # type: ignore[no-any-return]  # page_state is S


@asynccontextmanager
async def served_runtime(settings: Settings) -> AsyncIterator[AgentRuntime]:
    """The runtime the pages' states reach (``get_runtime``) while the block runs, opened on
    ``settings`` and closed after."""
    opened = await AgentRuntime.open(settings)
    set_runtime(opened)
    try:
        yield opened
    finally:
        set_runtime(None)
        await opened.close()


@asynccontextmanager
async def headless_processor() -> AsyncIterator[BaseStateEventProcessor]:
    """The real Reflex event processor on an in-memory state manager, running while the block runs."""
    async with BaseStateEventProcessor().configure(state_manager=StateManagerMemory()) as running:
        yield running
