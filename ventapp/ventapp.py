"""App assembly: the Reflex app, our API mounted through ``api_transformer``, the lifespan.

Module level holds definitions only (pitfall 11): resources open in the lifespan
task, which Reflex runs once per worker.
"""

from __future__ import annotations

import reflex as rx

from ventapp.api.app import create_api
from ventapp.pages.chat import chat_page
from ventapp.pages.knowledge import knowledge_page
from ventapp.pages.schedules import schedules_page
from ventapp.pages.usage import usage_page
from ventapp.scheduler.lifespan import app_lifespan

app = rx.App(
    api_transformer=create_api(),
    theme=rx.theme(appearance="inherit", accent_color="teal", gray_color="slate", radius="large"),
)
app.register_lifespan_task(app_lifespan)
app.add_page(chat_page, route="/", title="VentAgent")
app.add_page(knowledge_page, route="/kb/[doc_id]", title="Knowledge base · VentAgent")
app.add_page(usage_page, route="/usage", title="Usage · VentAgent")
app.add_page(schedules_page, route="/schedules", title="Schedules · VentAgent")
