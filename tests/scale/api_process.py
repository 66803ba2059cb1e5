"""One app process for the scale-out tests: ``python -m tests.scale.api_process PORT``.

Serves ``create_api()`` with the app's lifespan under uvicorn on 127.0.0.1:PORT, configured by
the environment the test gives it (DATABASE_URL, REDIS_URL, CHECKPOINTER, the scripted model).
A separate process, not a thread: the runtime is a process-wide singleton, exactly what the
scale-out must share through PostgreSQL and Redis.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn

from ventapp.api.app import create_api
from ventapp.config import get_settings
from ventapp.scheduler.lifespan import app_lifespan


def main(port: int) -> None:
    """Serve until terminated."""
    settings = get_settings()

    @asynccontextmanager
    async def lifespan(_app: object) -> AsyncIterator[None]:
        async with app_lifespan(settings):
            yield

    uvicorn.run(create_api(lifespan=lifespan), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]))
