"""RedisCoordination against a real Redis: leases that expire, limits in total and per user, claims, Stop."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from ventapp.agent.admission import GateFull
from ventapp.agent.coordination import CoordinationUnavailable, RedisCoordination


@pytest.fixture
async def pair(redis_server):  # type: ignore[no-untyped-def]
    """Two coordinators on one Redis (two processes), limits 3 in total and 2 per user, 1 s leases."""
    first = RedisCoordination(redis_server.url, max_total=3, max_per_user=2, lease_s=1)
    second = RedisCoordination(redis_server.url, max_total=3, max_per_user=2, lease_s=1)
    await first.redis.flushdb()
    yield first, second
    await first.close()
    await second.close()


async def test_limits_hold_across_coordinators_and_release_frees_a_slot(pair) -> None:  # type: ignore[no-untyped-def]
    first, second = pair
    await first.take_slot("ann")
    ann_second = await second.take_slot("ann")
    with pytest.raises(GateFull) as per_user:
        await first.take_slot("ann")
    await second.take_slot("bob")
    with pytest.raises(GateFull) as total:
        await first.take_slot("cy")

    assert per_user.value.scope == "user" and total.value.scope == "process"
    ann_second.release()
    await asyncio.sleep(0.1)  # the release goes to Redis on a task
    await first.take_slot("cy")


async def test_a_crashed_processs_slots_and_claims_expire_after_the_lease(pair) -> None:  # type: ignore[no-untyped-def]
    first, second = pair
    session = str(uuid.uuid4())
    for user in ("ann", "bob", "cy"):
        await first.take_slot(user)  # never released, never extended: first has "crashed"
    assert await first.claim_session(session) is not None
    assert await second.claim_session(session) is None and await second.session_busy(session)

    await asyncio.sleep(1.2)

    await second.take_slot("dan")
    assert await second.claim_session(session) is not None


async def test_the_heartbeat_keeps_a_live_processs_leases(pair) -> None:  # type: ignore[no-untyped-def]
    first, second = pair
    session = str(uuid.uuid4())
    await first.start(lambda _sid: None)
    assert await first.claim_session(session) is not None

    await asyncio.sleep(1.5)

    assert await second.claim_session(session) is None


async def test_stop_reaches_the_process_that_holds_the_session(pair) -> None:  # type: ignore[no-untyped-def]
    first, second = pair
    session = str(uuid.uuid4())
    heard: list[str] = []
    await first.start(heard.append)
    await asyncio.sleep(0.2)  # subscribed
    assert await second.broadcast_stop(session) is False, "nobody runs it"
    await first.claim_session(session)

    assert await second.broadcast_stop(session) is True
    for _ in range(50):
        if heard:
            break
        await asyncio.sleep(0.02)
    assert heard == [session]


async def test_an_unreachable_redis_is_unavailable_quickly() -> None:
    from tests.servers import free_port

    gone = RedisCoordination(f"redis://127.0.0.1:{free_port()}/0", max_total=1, max_per_user=1, lease_s=1)
    with pytest.raises(CoordinationUnavailable):
        await gone.take_slot("ann")
    await gone.close()


async def test_stop_arrives_by_the_broadcast_at_once_not_at_the_next_heartbeat(redis_server) -> None:  # type: ignore[no-untyped-def]
    # 30 s leases: the heartbeat (and its stop-flag check) comes every 10 s, so only the pub/sub
    # message can deliver Stop within the second (the listener once had no connection at all).
    first, second = (
        RedisCoordination(redis_server.url, max_total=3, max_per_user=2, lease_s=30) for _ in range(2)
    )
    session = str(uuid.uuid4())
    heard: list[str] = []
    try:
        await first.start(heard.append)
        await asyncio.sleep(0.3)  # subscribed
        await first.claim_session(session)
        assert await second.broadcast_stop(session) is True
        for _ in range(50):
            if heard:
                break
            await asyncio.sleep(0.02)
        assert heard == [session]
    finally:
        await first.close()
        await second.close()
