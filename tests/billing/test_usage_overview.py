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
    processor: BaseStateEventProcessor, name: str, token: str = ""
) -> usage_overview_state.UsageOverviewState:
    token = token or uuid.uuid4().hex
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


async def _fire(processor: BaseStateEventProcessor, token: str, name: str, **payload: object) -> None:
    handler = usage_overview_state.UsageOverviewState.event_handlers[name]
    event = Event(name=format_event_handler(handler), payload=payload)
    _ = [d async for d in processor.enqueue_stream_delta(token, event)]


async def _as(
    processor: BaseStateEventProcessor, name: str
) -> tuple[str, usage_overview_state.UsageOverviewState]:
    """A tab of ``name`` with the overview loaded: its token and the overview's state."""
    token = uuid.uuid4().hex
    return token, await _overview_of(processor, name, token)


async def _state(processor: BaseStateEventProcessor, token: str) -> usage_overview_state.UsageOverviewState:
    root = await processor._root_context.state_manager.get_state(  # type: ignore[union-attr]
        BaseStateToken(ident=token, cls=State)
    )
    return await root.get_state(usage_overview_state.UsageOverviewState)


async def test_an_operator_sets_a_users_daily_limit_on_the_page(
    processor: BaseStateEventProcessor, engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tester: the 429 says an operator can raise the limit "on the usage page", which had no such
    control (only ``PUT /api/usage/quota`` with ``for_user``). Operators now set it there."""
    from ventapp.billing.guard import quota_status

    monkeypatch.setattr(us, "get_runtime", lambda: SimpleNamespace(engine=engine, settings=make_settings()))
    settle(
        engine,
        run_id="r-bob",
        session_id="s",
        user_name="bob",
        model="scripted-demo",
        calls=[CallUsage("c", 100, 0, "provider")],
    )
    token, _ = await _as(processor, "ops")
    await _fire(processor, token, "pick_user", user_name="bob")
    await _fire(processor, token, "save_for", form_data={"for_user": "bob", "daily_token_limit": "5000"})

    ops = await _state(processor, token)
    assert ops.set_error == "" and "bob" in ops.set_notice
    assert quota_status(engine, make_settings(), "bob").daily_token_limit == 5000
    assert [row.quota for row in ops.users if row.user_name == "bob"] == ["5,000"]

    await _fire(processor, token, "save_for", form_data={"for_user": "bob", "daily_token_limit": "0"})
    assert quota_status(engine, make_settings(), "bob").daily_token_limit == 0


@pytest.mark.parametrize(
    ("form", "why"),
    [
        ({"for_user": "bob", "daily_token_limit": "-1"}, "a negative limit"),
        ({"for_user": "bob", "daily_token_limit": "lots"}, "not a number"),
        ({"for_user": "   ", "daily_token_limit": "10"}, "no user named"),
    ],
)
async def test_the_form_refuses_what_the_api_refuses(
    processor: BaseStateEventProcessor, engine: sa.Engine, form: dict[str, str], why: str
) -> None:
    from ventapp.billing.guard import quota_status

    before = quota_status(engine, make_settings(), "bob").daily_token_limit
    token, _ = await _as(processor, "ops")
    await _fire(processor, token, "save_for", form_data=form)

    ops = await _state(processor, token)
    assert ops.set_error != "" and ops.set_notice == "", why
    assert quota_status(engine, make_settings(), "bob").daily_token_limit == before


async def test_a_user_cannot_set_anyones_limit_from_the_page(
    processor: BaseStateEventProcessor, engine: sa.Engine
) -> None:
    from ventapp.billing.guard import quota_status

    before = quota_status(engine, make_settings(), "bob").daily_token_limit
    token, _ = await _as(processor, "alice")
    await _fire(processor, token, "save_for", form_data={"for_user": "bob", "daily_token_limit": "0"})

    alice = await _state(processor, token)
    assert alice.set_error.startswith("只有运维人员") and alice.set_notice == ""
    assert quota_status(engine, make_settings(), "bob").daily_token_limit == before
