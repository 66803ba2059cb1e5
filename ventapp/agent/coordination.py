"""What processes must agree on: the run gate, session claims, Stop, liveness (issue 14, scale-out).

:class:`LocalCoordination` is the single process (the default): the gate is the in-process
:class:`~ventapp.agent.admission.RunGate`, a session is claimed by its ``asyncio.Lock`` alone,
and Stop reaches only this process's runs (there are no others).

:class:`RedisCoordination` (``REDIS_URL``) lets N processes share them:

* the gate is two sorted sets of leases (all runs, and per user) changed by one Lua script,
  so ``MAX_CONCURRENT_RUNS`` / ``MAX_RUNS_PER_USER`` hold in total; a lease's score is its
  expiry, so the slots of a crashed process free themselves after ``RUN_LEASE_S``;
* a session is claimed with ``SET NX PX`` (a lease too), so a double submit to two processes
  gives one 200 and one 409;
* one heartbeat task per process extends every lease it holds every ``RUN_LEASE_S / 3``;
* Stop is a flag key plus a pub/sub broadcast: the process running the session's run stops it
  at once on the message, or at its next heartbeat from the flag if it missed the message;
* crash recovery is by lease: a ``running`` row is marked ``interrupted`` only when no process
  holds its session's claim any more (never because another process restarted).

Releasing is synchronous for callers (a run's ``on_release``); the Redis calls go to a task,
and a release that fails is covered by the lease expiring.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import uuid
from typing import Any

from ventapp.agent.admission import GateFull, RunGate

logger = logging.getLogger(__name__)

PREFIX = "ventagent:"
STOP_CHANNEL = PREFIX + "stop"

# KEYS: all-runs zset, user zset. ARGV: member, lease ms, max total, max per user.
# Returns 0 (taken), 1 (total full), 2 (user full). Scores are expiry times in server ms.
_ACQUIRE = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
redis.call('ZADD', KEYS[1], now + ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], now + ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], 2 * ARGV[2])
return 0
"""

# KEYS: all-runs zset, user zset. ARGV: member, lease ms. Extends a held slot (XX: never re-adds).
_EXTEND_SLOT = """
local t = redis.call('TIME')
local until_ms = t[1] * 1000 + math.floor(t[2] / 1000) + ARGV[2]
redis.call('ZADD', KEYS[1], 'XX', until_ms, ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', until_ms, ARGV[1])
redis.call('PEXPIRE', KEYS[2], 2 * ARGV[2])
return 1
"""

# KEYS: claim key. ARGV: token, lease ms (extend) — only while the token is still ours.
_EXTEND_CLAIM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

_RELEASE_CLAIM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class CoordinationUnavailable(Exception):
    """The shared store (Redis) cannot be reached: new runs are refused with 503, never left hanging."""


class Held:
    """Something taken that :meth:`release` gives back (once; safe to call again)."""

    def __init__(self, release: Any = None) -> None:
        self._release = release
        self.released = False

    def release(self) -> None:
        """Give it back."""
        if not self.released:
            self.released = True
            if self._release is not None:
                self._release()


class Coordination(abc.ABC):
    """The shared-state operations the run pipeline needs; one per process (``runtime.coordination``)."""

    shared = False
    """True when other processes take part (Redis)."""

    async def start(self, on_stop: Any) -> None:  # noqa: B027  (optional hook)
        """Begin background work; ``on_stop(session_id)`` is called when any process asks to stop a run."""

    async def close(self) -> None:  # noqa: B027  (optional hook)
        """End background work and drop connections."""

    @abc.abstractmethod
    async def take_slot(self, user_name: str) -> Held:
        """A gate slot for one run of ``user_name``.

        Raises:
            GateFull: All runs, or the user's, are at their limit.
            CoordinationUnavailable: The shared store cannot be reached.
        """

    async def claim_session(self, session_id: str) -> Held | None:
        """Claim ``session_id`` for one run across processes; None when another process holds it."""
        return Held()

    async def session_busy(self, session_id: str) -> bool:
        """Whether any other process holds the session's claim."""
        return False

    async def broadcast_stop(self, session_id: str) -> bool:
        """Ask every process to stop the session's run; True when some process holds it."""
        return False

    async def claimed_sessions(self, session_ids: list[str]) -> set[str]:
        """Which of ``session_ids`` some process holds now (a live run)."""
        return set()

    async def ping(self) -> None:  # noqa: B027  (nothing to reach in a single process)
        """Check the shared store. Raises ``CoordinationUnavailable``."""


class LocalCoordination(Coordination):
    """The single process: the in-process gate; session claims are the runtime's asyncio locks."""

    def __init__(self, gate: RunGate) -> None:
        self.gate = gate

    async def take_slot(self, user_name: str) -> Held:
        """See :meth:`Coordination.take_slot` (never unavailable)."""
        return Held(self.gate.acquire(user_name).release)


class RedisCoordination(Coordination):
    """Gate, claims and Stop in Redis (``REDIS_URL``), shared by every process.

    Args:
        url: ``redis://host:port/db``.
        max_total: ``MAX_CONCURRENT_RUNS`` (across processes).
        max_per_user: ``MAX_RUNS_PER_USER`` (across processes).
        lease_s: ``RUN_LEASE_S``: how long a crashed process's slots and claims outlive it.
    """

    shared = True

    def __init__(self, url: str, max_total: int, max_per_user: int, lease_s: float) -> None:
        import redis.asyncio as aioredis

        self.redis = aioredis.Redis.from_url(
            url, socket_timeout=2, socket_connect_timeout=2, decode_responses=True
        )
        # Pub/sub on a client of its own without a read timeout: the Stop listener waits for
        # messages indefinitely (health checks notice a dead connection instead).
        self._subscriber = aioredis.Redis.from_url(
            url, socket_connect_timeout=2, health_check_interval=10, decode_responses=True
        )
        self.max_total = max_total
        self.max_per_user = max_per_user
        self.lease_ms = max(1000, int(lease_s * 1000))
        self._acquire = self.redis.register_script(_ACQUIRE)
        self._extend_slot = self.redis.register_script(_EXTEND_SLOT)
        self._extend_claim = self.redis.register_script(_EXTEND_CLAIM)
        self._release_claim = self.redis.register_script(_RELEASE_CLAIM)
        self._slots: dict[str, str] = {}
        """member -> user zset key, for the slots this process holds."""
        self._claims: dict[str, str] = {}
        """claim key -> token, for the sessions this process holds."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._heartbeat: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None

    async def _call(self, coroutine: Any) -> Any:
        from redis.exceptions import RedisError

        try:
            return await coroutine
        except (RedisError, OSError) as down:
            raise CoordinationUnavailable(str(down)) from down

    def _later(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def start(self, on_stop: Any) -> None:
        """Start the heartbeat and the Stop listener (both reconnect by themselves)."""
        self._on_stop = on_stop
        self._heartbeat = asyncio.create_task(self._beat(), name="redis-lease-heartbeat")
        self._listener = asyncio.create_task(self._listen(on_stop), name="redis-stop-listener")

    async def close(self) -> None:
        """Stop background tasks, give back what is held, close the connection pool."""
        for task in (self._heartbeat, self._listener):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=2)
        with contextlib.suppress(Exception):
            await self.redis.aclose()
        with contextlib.suppress(Exception):
            await self._subscriber.aclose()

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            try:
                for member, user_key in list(self._slots.items()):
                    await self._extend_slot(keys=[PREFIX + "runs", user_key], args=[member, self.lease_ms])
                for key, token in list(self._claims.items()):
                    await self._extend_claim(keys=[key], args=[token, self.lease_ms])
                    # The stop flag backs up the broadcast (a message published while this
                    # process was reconnecting is lost; the flag is not).
                    session_id = key.removeprefix(PREFIX + "session:")
                    if self._on_stop is not None and await self.redis.exists(f"{PREFIX}stop:{session_id}"):
                        self._on_stop(session_id)
            except Exception as failed:  # Redis away: leases may lapse; retried next beat
                logger.warning("could not extend run leases in Redis: %s", failed)

    async def _listen(self, on_stop: Any) -> None:
        while True:
            try:
                pubsub = self._subscriber.pubsub()
                await pubsub.subscribe(STOP_CHANNEL)
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        on_stop(str(message["data"]))
            except asyncio.CancelledError:
                raise
            except Exception as failed:
                logger.warning("Stop listener lost Redis (%s); reconnecting", failed)
                await asyncio.sleep(1)

    async def take_slot(self, user_name: str) -> Held:
        """See :meth:`Coordination.take_slot`."""
        member = uuid.uuid4().hex
        user_key = f"{PREFIX}runs:user:{user_name}"
        result = await self._call(
            self._acquire(
                keys=[PREFIX + "runs", user_key],
                args=[member, self.lease_ms, self.max_total, self.max_per_user],
            )
        )
        if result == 1:
            raise GateFull("process", self.max_total)
        if result == 2:
            raise GateFull("user", self.max_per_user)
        self._slots[member] = user_key

        def release() -> None:
            self._slots.pop(member, None)
            self._later(self._forget_slot(member, user_key))

        return Held(release)

    async def _forget_slot(self, member: str, user_key: str) -> None:
        with contextlib.suppress(Exception):
            await self.redis.zrem(PREFIX + "runs", member)
            await self.redis.zrem(user_key, member)

    async def claim_session(self, session_id: str) -> Held | None:
        """See :meth:`Coordination.claim_session`."""
        key = f"{PREFIX}session:{session_id}"
        token = uuid.uuid4().hex
        if not await self._call(self.redis.set(key, token, nx=True, px=self.lease_ms)):
            return None
        self._claims[key] = token
        await self._call(self.redis.delete(f"{PREFIX}stop:{session_id}"))  # an old Stop is not for this run

        def release() -> None:
            self._claims.pop(key, None)
            self._later(self._forget_claim(key, token))

        return Held(release)

    async def _forget_claim(self, key: str, token: str) -> None:
        with contextlib.suppress(Exception):
            await self._release_claim(keys=[key], args=[token])

    async def session_busy(self, session_id: str) -> bool:
        """See :meth:`Coordination.session_busy`."""
        return bool(await self._call(self.redis.exists(f"{PREFIX}session:{session_id}")))

    async def broadcast_stop(self, session_id: str) -> bool:
        """See :meth:`Coordination.broadcast_stop`."""
        if not await self.session_busy(session_id):
            return False
        await self._call(self.redis.set(f"{PREFIX}stop:{session_id}", "1", px=self.lease_ms))
        await self._call(self.redis.publish(STOP_CHANNEL, session_id))
        return True

    async def claimed_sessions(self, session_ids: list[str]) -> set[str]:
        """See :meth:`Coordination.claimed_sessions`."""
        if not session_ids:
            return set()
        values = await self._call(self.redis.mget([f"{PREFIX}session:{sid}" for sid in session_ids]))
        return {sid for sid, value in zip(session_ids, values, strict=True) if value is not None}

    async def ping(self) -> None:
        """See :meth:`Coordination.ping`."""
        await self._call(self.redis.ping())
