"""Reflex configuration.

Ports are not set here: the Makefile passes ``--frontend-port``/``--backend-port`` from
``PORT`` (read by ``ventapp.config``, the only reader of the environment), and a port in
the config would make ``reflex run --backend-only`` refuse to start.

``backend_host`` is ``HOST`` (default ``127.0.0.1``: only this machine can connect) and
``cors_allowed_origins`` is ``CORS_ORIGINS``: Reflex adds its CORS middleware with that
list (exact origins; empty: no CORS headers at all, where Reflex's default ``*`` would
echo any origin with credentials). The event socket's origin check is our guard
(``ventapp.api.guards``), which also accepts the app's own origin.

``redis_url`` is ``REDIS_URL`` (Reflex itself reads only ``REFLEX_REDIS_URL``): with it the UI
state of every process lives in Redis, so a browser's websocket may land on any process. An
explicit ``REFLEX_REDIS_URL`` in the environment still wins (Reflex applies it over this file).

The Radix theme (teal on slate, following the browser's light or dark preference until the header's
switch sets one) is the Radix Themes plugin's: Reflex 0.10 deprecates ``App(theme=...)``.
"""

import sys

import reflex as rx
from reflex_base.plugins.sitemap import SitemapPlugin

from ventapp.config import settings_at_start

# A bad setting ends the start here with one line naming the key (no traceback through Reflex's CLI).
_settings = settings_at_start()
if _settings.hitl_tools:  # its check imports the tool modules (~1 s): only when HITL_TOOLS names any
    # Here, before Reflex's banner: in the server's start the one line came after "App running at".
    from ventapp.agent.hitl_names import check_hitl_tools_at_start

    check_hitl_tools_at_start(_settings)
_serving = sys.argv[1:2] == ["run"]  # `reflex run` (not `reflex export`: a UI build needs no database)
if _serving and (not _settings.database_url.startswith("sqlite") or _settings.checkpointer == "postgres"):
    # A database server that does not answer: the same one line, before the banner too.
    from ventapp.db.engine import check_databases_at_start

    check_databases_at_start(
        _settings.database_url, _settings.checkpoint_url if _settings.checkpointer == "postgres" else None
    )

config = rx.Config(
    app_name="ventapp",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    disable_plugins=[SitemapPlugin],
    plugins=[
        rx.plugins.RadixThemesPlugin(
            theme=rx.theme(appearance="inherit", accent_color="teal", gray_color="slate", radius="large")
        )
    ],
    backend_host=_settings.host,
    cors_allowed_origins=list(_settings.cors_origins),
    **({"redis_url": _settings.redis_url} if _settings.redis_url else {}),
)
