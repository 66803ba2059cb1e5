"""Reflex configuration.

Ports are not set here: the Makefile passes ``--frontend-port``/``--backend-port`` from
``PORT`` (read by ``ventapp.config``, the only reader of the environment), and a port in
the config would make ``reflex run --backend-only`` refuse to start.
"""

import reflex as rx
from reflex_base.plugins.sitemap import SitemapPlugin

config = rx.Config(
    app_name="ventapp",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    disable_plugins=[SitemapPlugin],
)
