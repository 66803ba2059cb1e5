"""Per-subsystem health (spec 002 ``/health`` "逐子系统健康状态"): each check says ok, degraded or down, and why.

The checks read the runtime; none blocks the event loop (database work runs in a thread,
the model endpoint is probed with an async client), and the model endpoint probe is cached
for :data:`~ventapp.agent.endpoint_probe.PROBE_TTL_S` seconds, so a monitor polling ``/health`` every second costs the
provider one request every few seconds. ``/health`` answers 503 when any check is ``down``.
"""

from __future__ import annotations

import asyncio
import contextlib

from ventapp.agent.endpoint_probe import Check
from ventapp.agent.runtime import AgentRuntime
from ventapp.billing.pricing import unpriced_models
from ventapp.db.billing_store import pending_summary
from ventapp.db.engine import probe_write

WRITE_PROBE_TIMEOUT_S = 1.0
"""How long the database's write lock is waited for before the database reads as down."""
CHECKPOINTER_TIMEOUT_S = 2.0


async def database(runtime: AgentRuntime) -> Check:
    """A write probe (the write lock, then a rollback): a locked SQLite file still answers reads."""
    try:
        await asyncio.to_thread(probe_write, runtime.engine, WRITE_PROBE_TIMEOUT_S)
    except Exception as exc:
        return Check("down", f"The database refuses writes ({type(exc).__name__}); new chats answer 503.")
    return Check("ok", "The database takes writes.")


async def checkpointer(runtime: AgentRuntime) -> Check:
    """The graph-state store answers a read of an unknown thread."""
    if runtime.settings.checkpointer == "memory":
        return Check(
            "ok", "In memory: graph state is lost on restart (CHECKPOINTER=memory).", {"kind": "memory"}
        )
    try:
        async with asyncio.timeout(CHECKPOINTER_TIMEOUT_S):
            await runtime.checkpointer.aget_tuple({"configurable": {"thread_id": "health-probe"}})
    except Exception as exc:
        kind = runtime.settings.checkpointer
        return Check("down", f"The checkpointer cannot be read ({type(exc).__name__}).", {"kind": kind})
    return Check("ok", "The checkpointer answers.", {"kind": runtime.settings.checkpointer})


async def billing(runtime: AgentRuntime) -> Check:
    """Configured models without a price (their chats are refused), settlements waiting in
    ``billing_pending`` and entries parked in the spool file.

    ``detail``: ``pending_settlements``, ``spool`` and, when a price is missing, ``unpriced_models``.
    """
    spool = await asyncio.to_thread(runtime.spool.count)
    pending = 0
    unpriced: list[str] = []
    with contextlib.suppress(Exception):  # the database check reports an unreadable database
        pending, _ = await asyncio.to_thread(pending_summary, runtime.engine)
        if not runtime.settings.billing_allow_unpriced:
            models = [route.model for route in runtime.settings.routes if route.configured]
            unpriced = await asyncio.to_thread(unpriced_models, runtime.engine, models)
    detail: dict[str, object] = {"pending_settlements": pending, "spool": spool}
    if unpriced:
        names = ", ".join(unpriced)
        return Check(
            "degraded",
            f"No price for model(s) {names}: every chat on them is refused (503 model_unpriced). Add a "
            "price (python -m ventapp.billing set-price MODEL INPUT OUTPUT CNY) or set BILLING_ALLOW_UNPRICED=1.",
            {**detail, "unpriced_models": unpriced},
        )
    if pending or spool:
        return Check(
            "degraded",
            f"{pending} settlement(s) and {spool} spooled entr{'y' if spool == 1 else 'ies'} wait to be "
            "written; they are retried in the background.",
            detail,
        )
    return Check("ok", "Every settlement is booked.", detail)


async def coordination(runtime: AgentRuntime) -> Check:
    """Redis (``REDIS_URL``), which every process's gate, session claims and Stop go through."""
    if not runtime.coordination.shared:
        return Check("ok", "A single process: runs are coordinated in memory.", {"kind": "local"})
    try:
        async with asyncio.timeout(CHECKPOINTER_TIMEOUT_S):
            await runtime.coordination.ping()
    except Exception as exc:
        return Check(
            "down", f"Redis cannot be reached ({type(exc).__name__}); new runs answer 503.", {"kind": "redis"}
        )
    return Check("ok", "Redis answers.", {"kind": "redis"})


def process_guard(runtime: AgentRuntime) -> Check:
    """One process per ``DATA_DIR`` (invariant 2), unless the processes share Redis and a server database."""
    if runtime.coordination.shared:
        return Check("ok", "Several processes share Redis (REDIS_URL).", {"exclusive": False, "shared": True})
    if runtime.process_guard.exclusive:
        return Check("ok", "This process is the only one serving DATA_DIR.", {"exclusive": True})
    return Check(
        "degraded",
        "Another process serves the same DATA_DIR: graph state, run limits and session locks are split.",
        {"exclusive": False},
    )


async def model_endpoint(runtime: AgentRuntime) -> Check:
    """The main route's endpoint, with every other route's state under ``routes``."""
    routes = runtime.settings.routes
    checks = await asyncio.gather(*(runtime.endpoint_probe.check(route) for route in routes))
    main = checks[0]
    others = {route.name: check.public() for route, check in zip(routes[1:], checks[1:], strict=True)}
    return Check(main.status, main.reason, {**main.detail, **({"routes": others} if others else {})})


def mcp_servers(runtime: AgentRuntime) -> Check:
    """The MCP tool servers as last seen (listing at start, the latest call, a retry): never probed here.

    A server that is down leaves the app ``degraded``, not down: its tools are left out or
    answer with an error, everything else works.
    """
    hub = runtime.agents.mcp
    servers = hub.public()
    down = hub.down()
    if down:
        return Check(
            "degraded",
            f"MCP server(s) {', '.join(down)} down; their tools are left out or answer with an error, "
            "and they are tried again at a later run.",
            {"servers": servers},
        )
    return Check("ok", f"{len(servers)} MCP server(s) configured; none is down.", {"servers": servers})


async def subsystems(runtime: AgentRuntime) -> dict[str, Check]:
    """Every check of the runtime's subsystems, run concurrently (the scheduler's is the caller's)."""
    names = ("database", "checkpointer", "model_endpoint", "billing", "redis")
    results = await asyncio.gather(
        database(runtime),
        checkpointer(runtime),
        model_endpoint(runtime),
        billing(runtime),
        coordination(runtime),
    )
    return {
        **dict(zip(names, results, strict=True)),
        "process_guard": process_guard(runtime),
        "mcp_servers": mcp_servers(runtime),
    }
