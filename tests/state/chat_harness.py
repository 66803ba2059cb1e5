"""The headless ChatState harness the state tests share, and contract-event helpers.

The harness runs the real Reflex event processor (``BaseStateEventProcessor`` with
``StateManagerMemory``) and reads the deltas it would send to the browser and the scripts it
sends (:class:`Browser`, a recorder, stands in for the websocket); only the run pipeline is
replaced (the ``pipeline`` fixture) by a fake that yields real contract events into a real run
log. Import the ``client`` and ``pipeline`` fixtures where they are used.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import pytest
from reflex.event import Event
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex.state import State
from reflex_base.event.processor import BaseStateEventProcessor
from reflex_base.utils.format import format_event_handler

from ventapp.agent import events as ev
from ventapp.agent.run_log import MemoryRunLog
from ventapp.agent.runtime import AgentRuntime
from ventapp.config import get_settings
from ventapp.db.spool import Spool
from ventapp.state import chat_state as cs
from ventapp.state import live_bubble, name_dialog, server_view, turns
from ventapp.state.live_answer import LiveAnswer, reduce_event


def fold(events: Iterable[ev.ContractEvent], live: LiveAnswer | None = None) -> LiveAnswer:
    live = live or LiveAnswer()
    for event in events:
        live = reduce_event(live, event)
    return live


def call(tool_call_id: str, expression: str) -> ev.ToolCall:
    return ev.ToolCall(
        tool="calculate", cn_tool="计算器", args={"expression": expression}, tool_call_id=tool_call_id
    )


def result(tool_call_id: str, content: str, error: bool = False) -> ev.ToolResult:
    return ev.ToolResult(
        tool="calculate", cn_tool="计算器", content=content, error=error, tool_call_id=tool_call_id
    )


USAGE = ev.Usage(
    input_tokens=1100, output_tokens=134, total_tokens=1234, context_tokens=1100, context_limit=128000
)


async def stream(events: Iterable[ev.ContractEvent], pause_s: float = 0.0) -> AsyncIterator[ev.ContractEvent]:
    for event in events:
        if pause_s:
            await asyncio.sleep(pause_s)
        yield event


def tokens(count: int) -> list[ev.Token]:
    return [ev.Token(content=f"w{i} ") for i in range(count)]


# --- ChatState headless ------------------------------------------------------------------

SESSION = "11111111-2222-4333-8444-555555555555"
StateDelta = Mapping[str, Mapping[str, Any]]


class FakeRun:
    """Stands in for ``ChatRun``: the same attributes, real contract events (into a real run log)."""

    runtime: Any = None  # the fake runtime, set by the ``pipeline`` fixture
    numbered_after = 0  # a new run: its frames number from 1

    def __init__(self, events: list[ev.ContractEvent], pause_s: float) -> None:
        self.session_id, self.run_id, self.trace_id = SESSION, f"run-{uuid.uuid4().hex[:8]}", "trace-1"
        self.user_name = "Ann"
        self._events, self._pause_s = events, pause_s
        self.released = False
        self.stops = 0

    def release(self) -> None:
        self.released = True

    def request_stop(self) -> bool:
        self.stops += 1
        return True

    async def events(self) -> AsyncIterator[ev.ContractEvent]:
        async for event in stream(self._events, self._pause_s):
            yield event
        self.released = True  # as ChatRun: finalised and released once its events are read


class FakeRuntime:
    """What the UI reaches of the runtime: a real in-process run log."""

    engine: Any = None
    """No database: the tests replace the store reads the UI makes."""

    def __init__(self) -> None:
        self.run_log = MemoryRunLog()
        self.spool = Spool(get_settings().data_dir / f"no-spool-{uuid.uuid4()}.jsonl")  # never written
        self.active_runs: dict[str, Any] = {}
        self.tasks: list[asyncio.Task[Any]] = []
        self._deliveries: set[object] = set()

    delivering = AgentRuntime.delivering
    """The real one, so that a test sees while a tab is showing a run's end."""

    def track(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        self.tasks.append(task)
        return task


@pytest.fixture
def pipeline(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """Replace the run pipeline and the database reads used by ChatState."""
    fake = SimpleNamespace(requests=[], events=[], pause_s=0.0, reject=None, runs=[], runtime=FakeRuntime())
    monkeypatch.setattr(FakeRun, "runtime", fake.runtime)

    async def start_chat(runtime: object, request: Any) -> FakeRun:
        fake.requests.append(request)
        if fake.reject is not None:
            raise fake.reject
        run = FakeRun(fake.events, fake.pause_s)
        fake.runs.append(run)
        return run

    async def load_sessions(user_name: str, lang: str = "zh-CN") -> list[Any]:
        return [cs.SessionView(id=SESSION, title="calc", updated=datetime(2025, 1, 1).isoformat())]

    monkeypatch.setattr(turns, "current_runtime", lambda: fake.runtime)
    monkeypatch.setattr(turns, "start_chat", start_chat)

    async def session_mark(session_id: str) -> str:
        return ""  # nothing stored changes behind the tab's back

    monkeypatch.setattr(turns, "session_mark", session_mark)

    async def load_session(session_id: str, user_name: str, lang: str = "zh-CN") -> None:
        return None  # nothing stored: a settled answer stays as it was shown live

    monkeypatch.setattr(cs, "load_sessions", load_sessions)
    monkeypatch.setattr(live_bubble, "load_sessions", load_sessions)
    monkeypatch.setattr(name_dialog, "load_sessions", load_sessions)
    monkeypatch.setattr(server_view, "load_sessions", load_sessions)
    monkeypatch.setattr(server_view, "load_session", load_session)
    return fake


def handler(name: str) -> str:
    return format_event_handler(cs.ChatState.event_handlers[name])


def chat_vars(deltas: list[StateDelta]) -> list[dict[str, Any]]:
    """The ChatState part of each delta, with the ``_rx_state_`` suffix removed."""
    out = []
    for delta in deltas:
        for key, values in delta.items():
            if key.endswith("chat_state"):
                out.append({name.removesuffix("_rx_state_"): value for name, value in values.items()})
    return out


class Browser:
    """Stands in for the websocket: records the frontend events (``_call_script``) sent to each tab."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[str]] = {}
        self.values: dict[str, list[tuple[str, str]]] = {}
        """``(ref, value)`` of each ``rx.set_value`` sent to a tab (e.g. text put back in the composer)."""
        self.functions: dict[str, list[str]] = {}
        """The JavaScript of each ``_call_function`` sent to a tab (a toast, for one)."""

    async def emit_update(self, update: Any, token: str) -> None:
        for event in update.events:
            if event.name == "_call_script":
                self.scripts.setdefault(token, []).append(event.payload["javascript_code"])
            elif event.name == "_call_function":
                self.functions.setdefault(token, []).append(str(event.payload["function"]))
            elif event.name == "_set_value":
                self.values.setdefault(token, []).append((event.payload["ref"], event.payload["value"]))


_BUFFER_CALL = re.compile(r"\.(put|add)\((.*)\)$", re.S)


def browser_text(scripts: list[str], live_id: str, buffer: str = "livetext") -> str:
    """What the browser's live ``buffer`` holds after ``scripts`` (ventapp.state.live_text's rules)."""
    held = {"id": "", "text": ""}
    for script in scripts:
        match = _BUFFER_CALL.search(script)
        if match is None:
            continue
        name, *args = json.loads(f"[{match.group(2)}]")
        if name != buffer:
            continue
        if match.group(1) == "put":
            held = {"id": args[0], "text": args[1]}
        elif held["id"] == args[0] and len(held["text"]) >= args[1]:
            held["text"] = held["text"][: args[1]] + args[2]
    return held["text"] if held["id"] == live_id else ""


class Client:
    """One browser tab: a token, the deltas its events produced and the scripts it was sent."""

    def __init__(self, processor: BaseStateEventProcessor, browser: Browser | None = None) -> None:
        self.processor = processor
        self.browser = browser or Browser()
        self.token = uuid.uuid4().hex

    @property
    def scripts(self) -> list[str]:
        return self.browser.scripts.get(self.token, [])

    async def shown_text(self) -> str:
        """The live bubble's text as this tab's browser would render it."""
        return browser_text(self.scripts, (await self.state()).live_id)

    async def shown_reasoning(self) -> str:
        """The live bubble's reasoning as this tab's browser would render it."""
        return browser_text(self.scripts, (await self.state()).live_id, "livereasoning")

    async def fire(self, name: str, **payload: Any) -> list[dict[str, Any]]:
        event = Event(name=handler(name), payload=payload)
        deltas = [d async for d in self.processor.enqueue_stream_delta(self.token, event)]
        return chat_vars(deltas)

    async def state(self) -> cs.ChatState:
        manager = self.processor._root_context.state_manager  # type: ignore[union-attr]  # configured below
        root = await manager.get_state(BaseStateToken(ident=self.token, cls=State))
        return await root.get_state(cs.ChatState)


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    browser = Browser()
    processor = BaseStateEventProcessor().configure(
        state_manager=StateManagerMemory(),
        event_namespace=browser,  # type: ignore[arg-type]  # only emit_update is used
    )
    async with processor:
        tab = Client(processor, browser)
        await tab.fire("save_user_name", form_data={"user_name": "Ann"})
        await tab.fire("relocalise", lang="en")  # these tests read English; test_chat_lang covers Chinese
        yield tab


# --- a paused run ----------------------------------------------------------------------------

TOKEN = "interrupt-1"
APPROVAL = ev.Interrupt(
    kind="tool_approval",
    tool_approval={
        "tool": "calculate",
        "args": {"expression": "(12+8)*3"},
        "reason": "r",
        "count": 1,
        "requests": [{"tool": "calculate", "args": {"expression": "(12+8)*3"}, "reason": "r"}],
    },
    interrupt_token=TOKEN,
    tool_call_ids=["c1"],
)
RESUMED = [
    call("c1", "(12+8)*3"),
    result("c1", "60"),
    ev.Token(content="The result is 60."),
    ev.Done(duration_ms=40, usage=USAGE),
]


@pytest.fixture
def resume(monkeypatch: pytest.MonkeyPatch, pipeline: SimpleNamespace) -> SimpleNamespace:
    """Replace ``start_resume``, ``pending_interrupt``, ``session_waits`` and ``stop_run`` as the UI calls them."""
    fake = SimpleNamespace(requests=[], events=list(RESUMED), reject=None, pending=None, stops=[], reads=0)

    async def start_resume(runtime: object, request: Any) -> FakeRun:
        fake.requests.append(request)
        if fake.reject is not None:
            raise fake.reject
        return FakeRun(fake.events, 0.0)

    async def pending_interrupt(runtime: object, session_id: str, user_name: str) -> ev.Interrupt | None:
        fake.reads += 1  # the checkpoint read
        return fake.pending

    def session_waits(engine: object, session_id: str, parked_pauses: object = ()) -> bool:
        return fake.pending is not None  # a pause is stored as a waiting run

    async def stop_run(runtime: object, session_id: str, user_name: str) -> bool:
        fake.stops.append((session_id, user_name))
        return True

    monkeypatch.setattr(turns, "start_resume", start_resume)
    monkeypatch.setattr(turns, "pending_interrupt", pending_interrupt)
    monkeypatch.setattr(turns.chat_store, "session_waits", session_waits)
    monkeypatch.setattr(turns, "stop_run", stop_run)
    return fake


async def paused(client: Client, pipeline: SimpleNamespace) -> cs.ChatState:
    """Send a message whose run pauses on :data:`APPROVAL`; the tab's state after it."""
    pipeline.events = [ev.Thinking(message="正在思考…", cn_agent="助手"), call("c1", "(12+8)*3"), APPROVAL]
    await client.fire("send", form_data={"message": "please calculate (12+8)*3"})
    return await client.state()
