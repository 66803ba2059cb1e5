"""The operators' overview on the usage page (issue 15), headless against a real billing database.

Lives beside ``test_usage_state.py`` for its database fixtures. The role comes from
``AUTH_NONE_OPERATORS`` (AUTH_MODE=none): an operator sees every user's line, a user sees nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from types import SimpleNamespace

import pytest
import sqlalchemy as sa
from reflex.event import Event
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex.state import State
from reflex_base.event.processor import BaseStateEventProcessor
from reflex_base.utils.format import format_event_handler

from tests.billing.conftest import make_settings
from tests.support import patched_env
from ventapp.billing.settlement import settle
from ventapp.billing.usage import CallUsage
from ventapp.state import ui_identity, usage_overview_state
from ventapp.state import usage_state as us


@pytest.fixture
async def processor(
    engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[BaseStateEventProcessor]:
    runtime = SimpleNamespace(engine=engine, settings=make_settings())
    for module in (ui_identity, usage_overview_state):
        monkeypatch.setattr(module, "get_runtime", lambda: runtime)
    with patched_env({"AUTH_MODE": "none", "AUTH_NONE_OPERATORS": "ops"}):
        async with BaseStateEventProcessor().configure(state_manager=StateManagerMemory()) as running:
            yield running


async def _overview_of(
    processor: BaseStateEventProcessor, name: str
) -> usage_overview_state.UsageOverviewState:
    token = uuid.uuid4().hex
    root_manager = processor._root_context.state_manager  # type: ignore[union-attr]  # configured above
    first = Event(
        name=format_event_handler(us.UsageState.event_handlers["edit_quota_input"]), payload={"value": ""}
    )
    _ = [d async for d in processor.enqueue_stream_delta(token, first)]
    root = await root_manager.get_state(BaseStateToken(ident=token, cls=State))
    (await root.get_state(us.UsageState)).user_name = name
    load = Event(
        name=format_event_handler(usage_overview_state.UsageOverviewState.event_handlers["load"]), payload={}
    )
    _ = [d async for d in processor.enqueue_stream_delta(token, load)]
    root = await root_manager.get_state(BaseStateToken(ident=token, cls=State))
    return await root.get_state(usage_overview_state.UsageOverviewState)


async def test_an_operator_sees_every_users_line_and_a_user_sees_none(
    processor: BaseStateEventProcessor, engine: sa.Engine
) -> None:
    for user, tokens in (("alice", 300), ("bob", 1_200)):
        settle(
            engine,
            run_id=f"r-{user}",
            session_id="s",
            user_name=user,
            model="scripted-demo",
            calls=[CallUsage("c", tokens, 0, "provider")],
        )
    ops = await _overview_of(processor, "ops")
    assert ops.is_operator and [(row.user_name, row.tokens) for row in ops.users] == [
        ("bob", "1,200"),
        ("alice", "300"),
    ]
    alice = await _overview_of(processor, "alice")
    assert not alice.is_operator and alice.users == []
