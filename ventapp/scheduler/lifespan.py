"""The app's lifespan: the agent runtime, and the schedule service inside it.

Order matters on the way out (spec 002, "取消收尾"): the schedule service stops firing,
stops its running executions and waits for their finalisation (partial answer saved,
usage settled) *before* the runtime closes the checkpointer.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ventapp.agent.runtime import AgentRuntime, runtime_lifespan
from ventapp.config import Settings
from ventapp.scheduler.service import Clock, ScheduleService, set_service


@contextlib.asynccontextmanager
async def app_lifespan(
    settings: Settings | None = None, clock: Clock | None = None
) -> AsyncIterator[AgentRuntime]:
    """Open the runtime, start the schedule service; on exit stop both, service first.

    Args:
        settings: Defaults to ``config.get_settings()``.
        clock: The service's "now" (tests inject one); default the system clock.
    """
    async with runtime_lifespan(settings) as runtime:
        service = ScheduleService(runtime, clock=clock)
        await service.start()
        set_service(service)
        try:
            yield runtime
        finally:
            set_service(None)
            await service.shutdown()
