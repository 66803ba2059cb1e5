"""Reflex configuration. Ports and environment come from ventapp.config (the only env reader)."""

import reflex as rx

from ventapp.config import get_settings

_settings = get_settings()

config = rx.Config(
    app_name="ventapp",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    frontend_port=_settings.port,
    backend_port=_settings.port,
    plugins=[rx.plugins.SitemapPlugin()],
    disable_plugins=["reflex.plugins.sitemap.SitemapPlugin"],
)
