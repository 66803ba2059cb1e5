"""App assembly: the Reflex app, our API mounted through ``api_transformer``, the lifespan.

Module level holds definitions only (pitfall 11): resources open in the lifespan
task, which Reflex runs once per worker.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import reflex as rx
from fastapi import FastAPI
from reflex_base.constants import DefaultPorts, Env
from reflex_base.environment import environment
from starlette.types import ASGIApp

from ventapp import server_signals
from ventapp.api.app import create_api
from ventapp.config import SettingError, stop_worker_on_bad_setting
from ventapp.obs.heap import freeze_start_up_heap
from ventapp.pages.chat import chat_page
from ventapp.pages.components.connection import overlay_wrap
from ventapp.pages.components.lang import t
from ventapp.pages.knowledge import knowledge_page
from ventapp.pages.login import login_page
from ventapp.pages.not_found import not_found_page
from ventapp.pages.schedules import schedules_page
from ventapp.pages.settings import settings_page
from ventapp.pages.usage import usage_page
from ventapp.scheduler.lifespan import app_lifespan
from ventapp.state.lang_state import DETECT_SCRIPT

logger = logging.getLogger(__name__)


def _api() -> FastAPI:
    """Our API, told whether this process serves the UI's pages and where the UI lives.

    ``make run`` mounts the compiled UI into this backend (``/`` is the chat page; Reflex
    sets the flag after this module is imported, so it is read per request);
    ``make api`` and ``make dev`` do not (``/`` then redirects to the test page, and in
    dev mode the UI on its own port still counts as the app's own origin).
    """
    config = rx.config.get_config()
    dev_ui = environment.REFLEX_ENV_MODE.get() == Env.DEV and not environment.REFLEX_BACKEND_ONLY.get()
    ui_port = (config.frontend_port or DefaultPorts.FRONTEND_PORT) if dev_ui else None
    return create_api(serves_ui=environment.REFLEX_MOUNT_FRONTEND_COMPILED_APP.get, ui_port=ui_port)


api = _api()


def _mount_reflex(reflex_backend: ASGIApp) -> ASGIApp:
    """Our API in front of Reflex's backend (pages, ``/_event``, ``/_upload``): our routes match first.

    Handed to Reflex as a function, not as the FastAPI app itself: Reflex wraps a Starlette app it is
    given in a CORS middleware of its own, on top of the one around the whole backend, and two CORS
    layers answered ``vary: Origin, Origin``. Mounting it here is what Reflex does, minus that layer.
    """
    api.mount("", reflex_backend)
    return api


app = rx.App(
    api_transformer=_mount_reflex,
    # Chinese first: the prerendered page says so; the head script corrects it (and stores the
    # browser's language) before the page hydrates.
    html_lang="zh-CN",
    head_components=[rx.script(DETECT_SCRIPT)],
    stylesheets=["/ventagent.css"],
)
# Reflex's overlay says "Cannot connect to server: …" in English only: ours is worded by the catalogue.
app.app_wraps[5, "Overlay"] = overlay_wrap
# The event socket's origin is checked by our HttpGuard in front of /_event, which knows the
# app's own origin; engineio given Reflex's explicit CORS_ORIGINS list would refuse that one.
if app.sio is not None:
    app.sio.eio.cors_allowed_origins = []


@contextlib.asynccontextmanager
async def _lifespan() -> AsyncIterator[None]:
    """:func:`app_lifespan`, with Granian told of a stop signal only after the runs it stops were
    finalised and the tabs following them sent the shutdown sentence (:mod:`ventapp.server_signals`)."""
    try:
        async with app_lifespan() as runtime:
            # Everything loaded so far lives as long as the server: out of the collector's full
            # passes, which otherwise stop every stream for ~170 ms each (issue 18, obs.heap).
            frozen = freeze_start_up_heap()
            logger.info("start-up heap frozen: %d objects kept out of full garbage collections", frozen)

            async def stop_and_settle() -> None:
                runtime.begin_shutdown()
                await runtime.settle()

            with server_signals.holding(stop_and_settle):
                yield
    except SettingError as bad:  # raised while starting, before the yield
        # One line naming the key; raising would print two tracebacks (Starlette's and Granian's).
        stop_worker_on_bad_setting(str(bad))


# Wraps the function a Granian worker registers its signal handlers with; it runs after this import.
server_signals.install()
app.register_lifespan_task(_lifespan)
# Titles follow the UI language (React renders the page's <title> and updates it on a switch).
app.add_page(chat_page, route="/", title=t("title.chat"))
app.add_page(knowledge_page, route="/kb/[doc_id]", title=t("title.knowledge"))
app.add_page(usage_page, route="/usage", title=t("title.usage"))
app.add_page(schedules_page, route="/schedules", title=t("title.schedules"))
app.add_page(settings_page, route="/settings", title=t("title.settings"))
app.add_page(login_page, route="/login", title=t("title.login"))
app.add_page(not_found_page, route="404", title=t("title.not_found"))
