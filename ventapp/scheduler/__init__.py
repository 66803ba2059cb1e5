"""Scheduled agent runs (spec 002, "定时任务"): cron firing that hands each execution to the pipeline.

* :mod:`~ventapp.scheduler.cron` — five-field crontab expressions on APScheduler 3 triggers;
* :mod:`~ventapp.scheduler.rules` — what a schedule may hold, and the refusals;
* :mod:`~ventapp.scheduler.execution` — claim a tick, admit it through ``start_chat``, consume it;
* :mod:`~ventapp.scheduler.service` — owners' operations, APScheduler jobs, misfires;
* :mod:`~ventapp.scheduler.public` — the JSON shapes; :mod:`~ventapp.scheduler.lifespan` — the app's lifespan.

Sits above ``ventapp.agent`` (it calls the pipeline) and below ``ventapp.api``/``ventapp.state``.
"""
