"""The wire contract: every event a run emits, as a discriminated union.

This module is the single source of the field names that the 1.5 frontend reads
(spec 002, "SSE 事件契约"); the SSE encoder (``ventapp.api.sse``) and the UI
reducer (``ventapp.state``) both consume these classes, so a field is added once
and both clients see it. The contract only grows: never rename or drop a field
(spec 000 §4).

Every event serialises to a flat JSON object whose ``type`` is the event name;
the transport adds :data:`TRANSPORT_FIELDS`: ``session_id``, ``trace_id`` and ``seq`` (the
frame's number in its run, from 1, issue 11 — additive: the 1.5 frontend ignores it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

TRANSPORT_FIELDS: tuple[str, ...] = ("session_id", "trace_id", "seq")
"""Fields every frame carries besides the event's own (written by ``ventapp.api.sse``)."""


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    def to_wire(self) -> dict[str, Any]:
        """Return the event as the JSON-ready dict sent to clients (``type`` first)."""
        return self.model_dump(mode="json")


class AgentStart(_Event):
    """A (sub-)agent started working. ``agent`` is the internal name, ``cn_agent`` the display name."""

    type: Literal["agent_start"] = "agent_start"
    agent: str
    cn_agent: str
    agent_id: str = "main"
    label: str = ""
    """The agent's display name in the request's ``Accept-Language`` (added by the API; ``cn_agent`` stays Chinese)."""


class Thinking(_Event):
    """A status line such as "正在思考…"; not part of the answer."""

    type: Literal["thinking"] = "thinking"
    message: str
    cn_agent: str


class ThinkingToken(_Event):
    """A piece of the model's reasoning text (providers that stream reasoning)."""

    type: Literal["thinking_token"] = "thinking_token"
    content: str


class Executing(_Event):
    """The agent is about to run the listed tools (one model step may call several)."""

    type: Literal["executing"] = "executing"
    message: str
    cn_agent: str
    tools: list[str]
    cn_tools: list[str]


class ToolCall(_Event):
    """One tool call, complete with its arguments.

    ``tool_call_id`` is the 2.0 addition that keys the UI's tool card (pitfall 12):
    the same tool is often called several times in one step. ``approved_by_rule`` is True
    when the call needed an approval but runs without a card because the user said
    "don't ask again" (an approval rule).
    """

    type: Literal["tool_call"] = "tool_call"
    tool: str
    cn_tool: str
    args: dict[str, Any]
    agent_id: str = "main"
    tool_call_id: str
    approved_by_rule: bool = False
    label: str = ""
    """The tool's display name in the request's ``Accept-Language`` (added by the API; ``cn_tool`` stays Chinese)."""


class ToolResult(_Event):
    """The result of the tool call ``tool_call_id``; ``error`` is True when the tool failed."""

    type: Literal["tool_result"] = "tool_result"
    tool: str
    cn_tool: str
    content: str
    error: bool = False
    agent_id: str = "main"
    tool_call_id: str
    label: str = ""
    """The tool's display name in the request's ``Accept-Language`` (added by the API; ``cn_tool`` stays Chinese)."""
    message: str = ""
    """A failed call's reason as a person reads it, in the request's ``Accept-Language`` (added by the API,
    :func:`~ventapp.agent.tool_failure_words.failure_for_person`: without the ``Tool '<name>' failed:``
    wrapper nor a refusal's ``[code]``); ``""`` when ``error`` is False. ``content`` stays what the model read."""


class Token(_Event):
    """A piece of the main agent's answer text (only ever from an ``AIMessageChunk``, pitfall 5)."""

    type: Literal["token"] = "token"
    content: str


class UpdatedTodoList(_Event):
    """The agent's todo list after ``write_todos``: items ``{content, status}``."""

    type: Literal["updated_todo_list"] = "updated_todo_list"
    todos: list[dict[str, Any]]


class Progress(_Event):
    """A free-form progress note."""

    type: Literal["progress"] = "progress"
    message: str


class Interrupt(_Event):
    """The run paused for a person: a tool approval, questions, or a plan (``message``).

    ``tool_approval``: ``{tool, label, args, reason, reason_code, side_effect, count, requests: [{tool,
    label, args, reason, reason_code}]}`` — every call of the batch, in order (one decision each on
    resume); ``label`` (added by the API) is the tool's display name in the request's
    ``Accept-Language``, e.g. ``计算器`` / ``Calculator``; ``reason`` is one sentence in one language: the API words ``needs_approval`` and
    ``default`` reasons in the request's ``Accept-Language`` (default zh-CN) when it writes the
    frame (:mod:`ventapp.api.wording`); ``reason_code`` says what it means so a client can word
    it in its own language: ``needs_approval`` (our approval rule), ``default`` (the framework's
    generic reason) or ``""`` (a reason of its own: show ``reason``);
    ``ask_user``: ``{questions: [...]}``; ``message``: the plan text when ``kind == "plan"``.
    ``interrupt_token`` must come back unchanged in ``POST /api/chat/resume``.
    """

    type: Literal["interrupt"] = "interrupt"
    tool_approval: dict[str, Any] | None = None
    ask_user: dict[str, Any] | None = None
    message: str | None = None
    interrupt_token: str | None = None
    tool_call_ids: list[str] = Field(default_factory=list)
    kind: Literal["tool_approval", "ask_user", "plan", "message"] = "message"


class Citation(BaseModel):
    """One source a tool returned (invariant 4): never written by the model."""

    model_config = ConfigDict(frozen=True)

    title: str
    url: str
    snippet: str = ""
    score: float | None = None
    tool: str = ""
    tool_call_id: str = ""


class Citations(_Event):
    """All sources collected in the run so far, de-duplicated by URL.

    ``model_only`` is True when the answer had no tool-backed source at all.
    """

    type: Literal["citations"] = "citations"
    items: list[Citation]
    model_only: bool = False


class AgentDone(_Event):
    """A (sub-)agent finished. ``context_tokens``: input tokens of its last model call.

    The main agent's (``agent_id`` ``main``) ``duration_ms`` is ``done``'s, the run's stored one.
    """

    type: Literal["agent_done"] = "agent_done"
    agent: str
    cn_agent: str
    duration_ms: int
    progress: int = 100
    context_tokens: int = 0
    agent_id: str = "main"
    label: str = ""
    """The agent's display name in the request's ``Accept-Language`` (added by the API; ``cn_agent`` stays Chinese)."""


class AgentError(_Event):
    """A sub-agent failed; the main run may continue."""

    type: Literal["agent_error"] = "agent_error"
    agent: str
    cn_agent: str
    message: str
    duration_ms: int
    agent_id: str = "main"
    label: str = ""
    """The agent's display name in the request's ``Accept-Language`` (added by the API; ``cn_agent`` stays Chinese)."""


class Usage(BaseModel):
    """Tokens of one run, summed over every model call.

    ``input_tokens`` is the billing figure; ``context_tokens`` is the input of the
    last main-thread call (context occupancy). ``usage_source`` is ``provider``
    when every call reported usage, else ``estimate`` (invariant 3).
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    context_tokens: int = 0
    context_limit: int = 0
    model_calls: int = 0
    usage_source: Literal["provider", "estimate", "none"] = "none"
    cost_micros: int = 0
    """What the run cost, in micro-units of ``currency`` (1 CNY = 1,000,000), at the model's price."""
    currency: str | None = None
    """``CNY`` / ``USD``; None when the model has no price (billed at zero)."""
    reasoning_tokens: int = 0
    """Part of ``output_tokens`` spent on reasoning (provider's ``reasoning_tokens``, else estimated
    from the streamed reasoning text); already included in ``output_tokens`` and the cost."""


class Done(_Event):
    """The run finished successfully; ends the stream.

    ``duration_ms`` is the run's stored duration (``execution_runs.duration_ms``), the figure a
    re-read shows: the agent's working time from its start to its final save; a resumed run counts
    its part before the pause plus its part after the resume, never the wait for the person.
    """

    type: Literal["done"] = "done"
    duration_ms: int
    usage: Usage
    run_id: str = ""
    workspace_links: list[dict[str, str]] = Field(default_factory=list)
    """The ``/workspace/…`` files the saved answer links, ``[{path, url}]`` as its
    ``GET /api/chat/history`` row lists them (:mod:`ventapp.agent.workspace_links`); additive."""


ErrorCode = Literal[
    "bad_request",
    "not_found",
    "model_unconfigured",
    "model_unreachable",
    "model_error",
    "model_failed",
    "model_busy",
    "model_rejected",
    "tool_error",
    "busy",
    "quota",
    "model_unpriced",
    "context_overflow",
    "timeout",
    "cancelled",
    "internal",
    "storage",
]
"""Why a request or run failed. For the model: ``model_unreachable`` (no connection, timeout, or the
connection broke mid-answer), ``model_busy`` (rate limit, overload, 502/503/504) and ``model_failed``
(the server failed on its side: another 5xx, or an error event mid-answer) may succeed when retried;
``model_rejected`` (the server refused this request: 4xx, validation 500s) and ``model_error`` (API key,
model name) will not until something is changed. ``model_failed`` was added later: an unexplained 5xx
used to be ``model_error``."""


class Error(_Event):
    """The run failed; ends the stream. ``message`` is a sentence for people, never ``str(exc)``.

    ``duration_ms`` and ``usage``: as ``done``'s, when the run's partial answer was saved (a stopped,
    timed-out or failed run), so its footer reads as a re-read shows it; None otherwise.
    """

    type: Literal["error"] = "error"
    message: str
    code: ErrorCode
    retry_after: int | None = None
    duration_ms: int | None = None
    usage: Usage | None = None


ContractEvent = Annotated[
    AgentStart
    | Thinking
    | ThinkingToken
    | Executing
    | ToolCall
    | ToolResult
    | Token
    | UpdatedTodoList
    | Progress
    | Interrupt
    | Citations
    | AgentDone
    | AgentError
    | Done
    | Error,
    Field(discriminator="type"),
]
"""Any contract event; narrow on ``.type``."""

EVENT_ADAPTER: TypeAdapter[ContractEvent] = TypeAdapter(ContractEvent)
"""Parses a wire dict back into its event class (used by tests and the history view)."""

EVENT_TYPES: tuple[str, ...] = (
    "agent_start",
    "thinking",
    "thinking_token",
    "executing",
    "tool_call",
    "tool_result",
    "token",
    "updated_todo_list",
    "progress",
    "interrupt",
    "citations",
    "agent_done",
    "agent_error",
    "done",
    "error",
)
"""The 14 business events plus ``error``, in the order of spec 002's table."""
