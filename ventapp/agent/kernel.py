"""The kernel: turns the deep agent's stream into typed contract events.

Input is ``graph.astream(input, config, stream_mode=["updates", "messages"],
subgraphs=True)``, which yields ``(namespace, mode, data)``; ``namespace == ()`` is
the main agent, ``("tools:<task id>", ...)`` a sub-agent running inside ``task``.

Channel roles (spec 000 pitfall 5):

* ``messages`` → ``token`` / ``thinking_token`` — only ``AIMessageChunk`` of the
  main agent; ``ToolMessage`` travels on this channel too and would leak raw JSON
  into the answer; summarisation calls are skipped by their ``lc_source``/``nostream`` tag;
* ``updates`` → complete tool calls (``executing`` + ``tool_call``), tool results
  (``tool_result``, ``citations``), ``updated_todo_list``, usage (``ContextMeter``)
  and ``__interrupt__``.

The kernel also keeps the :class:`RunTranscript` that finalisation persists.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.messages.ai import add_ai_message_chunks

from ventapp.agent import events as ev
from ventapp.agent.context_meter import ContextMeter
from ventapp.agent.interrupts import to_event, unique
from ventapp.agent.reasoning_text import ReasoningText
from ventapp.agent.source_tracker import SourceTracker
from ventapp.agent.subagent_tracker import SubagentTracker
from ventapp.tools.registry import tool_label

EDITED_CALLS_KEY = "hitl_edited_tool_calls"
"""State key where langchain's HumanInTheLoopMiddleware records a reviewer's replacement call."""
EDIT_NOTE_PREFIX = "Note: a human reviewer replaced this tool call"
EDITED_RESULT_MARKER = "Tool response:\n"
REJECTED_RESULT = re.compile(
    r"User rejected the tool call for `[^`]*` with reason: (?P<reason>.*)\Z", re.DOTALL
)
"""langchain's English wrapper round a reviewer's reason. Our approval middleware
(:mod:`ventapp.agent.approval_middleware`) no longer writes it, but threads checkpointed before it
still hold it: people see only the reason, worded in the turn's language when the reviewer gave none."""

MODEL_NODE = "model"
"""The graph node that calls the model (langchain's agent factory): the only update whose AI
message is a new model call. Middleware nodes repeat messages — the approval node re-sends the
paused call on resume, the tool-call patcher re-sends the whole history — and are never billed."""

HISTORY_NODE_PREFIX = "PatchToolCallsMiddleware."
"""deepagents' tool-call patcher, at a turn's start, re-sends the thread's whole history with a
synthetic error result ("Tool call … did not complete - no result was recorded") for each call left
unanswered — a pending approval dropped by a new message. None of its tool messages is a result
of this run: shown, the dropped call came back as a "Failed" card in the next answer."""

OPEN_CALL_BATCH = 256
"""Streamed chunks of the open model call kept before they are merged into one."""

MAIN_AGENT = "ventagent"
MAIN_AGENT_LABEL = "通风智能体"
MAIN_ID = "main"

# Display names of deepagents' built-in tools, Chinese and English (ours come from the registry).
_BUILTIN_LABELS = {
    "write_todos": ("任务清单", "Task list"),
    "ls": ("列目录", "List files"),
    "read_file": ("读文件", "Read file"),
    "write_file": ("写文件", "Write file"),
    "edit_file": ("改文件", "Edit file"),
    "delete": ("删除文件", "Delete file"),
    "glob": ("查找文件", "Find files"),
    "grep": ("搜索文件", "Search files"),
    "execute": ("执行命令", "Run command"),
    "task": ("子智能体", "Sub-agent"),
}


def label_for(tool: str, lang: str = "zh-CN") -> str:
    """Display name of a tool in ``lang`` (``"zh-CN"`` | ``"en"``): a built-in's, the registry's, or the name.

    The SSE contract's ``cn_tool`` is always the Chinese one; the browser UI asks in its own language.
    """
    builtin = _BUILTIN_LABELS.get(tool)
    if builtin is not None:
        return builtin[1] if lang == "en" else builtin[0]
    return tool_label(tool, lang)


@dataclass
class ToolCard:
    """One tool call as the transcript keeps it, keyed by ``tool_call_id`` (pitfall 12)."""

    tool_call_id: str
    tool: str
    cn_tool: str
    args: dict[str, Any]
    agent_id: str = MAIN_ID
    content: str | None = None
    error: bool = False
    approved_by_rule: bool = False
    review: str = ""
    """What the person decided on its approval card: ``approved`` | ``edited`` | ``rejected``; "" for none."""
    original_args: dict[str, Any] | None = None
    """The arguments the model proposed, when the person edited them (``args`` are the ones that ran)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form stored with the assistant message."""
        return dict(self.__dict__)


@dataclass
class RunTranscript:
    """What a run produced so far: answer text, reasoning, tool cards, citations, usage, interrupt."""

    tool_cards: dict[str, ToolCard] = field(default_factory=dict)
    sources: SourceTracker = field(default_factory=SourceTracker)
    meter: ContextMeter = field(default_factory=lambda: ContextMeter(context_limit=0))
    todos: list[dict[str, Any]] = field(default_factory=list)
    interrupt: ev.Interrupt | None = None
    answer_chars: int = 0
    """Length of :attr:`answer` (characters), kept without joining the pieces."""
    reasoning: ReasoningText = field(default_factory=ReasoningText)
    """The main agent's streamed reasoning, a paragraph per model call (as the live answer shows it)."""
    _pieces: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        """The answer text so far (joined on demand: appending stays O(1) per token)."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def append_answer(self, text: str) -> None:
        """Add a streamed piece of the answer."""
        self._pieces.append(text)
        self.answer_chars += len(text)


def _text_of(content: Any) -> str:
    """Text of a message content: a str, or the ``text`` parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) and part.get("type") == "text" else ""
            for part in content
            if isinstance(part, dict | str)
        )
    return ""


def _merged(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    first, *rest = chunks
    return add_ai_message_chunks(first, *rest) if rest else first


@dataclass(slots=True)
class _OpenSubCall:
    """A sub-agent's model call streaming now: its model task's checkpoint namespace, its chunks."""

    checkpoint_ns: str
    chunks: list[AIMessageChunk] = field(default_factory=list)


def _is_internal_call(metadata: dict[str, Any]) -> bool:
    tags = metadata.get("tags") or []
    return metadata.get("lc_source") == "summarization" or "nostream" in tags


def _messages_in(update: Any) -> list[Any]:
    if not isinstance(update, dict):
        return []
    messages = update.get("messages")
    value = getattr(messages, "value", messages)  # langgraph's Overwrite wraps the list
    return list(value) if isinstance(value, list) else []


class Kernel:
    """Consumes one graph stream and yields contract events, filling ``transcript``.

    Args:
        context_limit: The declared window (tokens).
        prior_cards: A resumed run's cards as the paused run saved them (``ToolCard.to_dict``):
            they keep their sub-agent, and a paused ``task`` is tracked again, so the rest of a
            sub-agent's work after an approval is shown as that sub-agent's.
        edited_args: ``tool_call_id -> args`` a reviewer set when approving; the cards show them
            first thing (a sub-agent's graph state does not stream the framework's edit record).
    """

    def __init__(
        self,
        context_limit: int,
        prior_cards: Iterable[dict[str, Any]] = (),
        edited_args: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.transcript = RunTranscript(meter=ContextMeter(context_limit=context_limit))
        self.subagents = SubagentTracker()
        # The chunks of the main-thread call streaming now, merged every OPEN_CALL_BATCH chunks
        # (and when the call is cut): merging on every token re-copied the whole message so far,
        # quadratic in its length; keeping every chunk would hold thousands of objects.
        self._open_call: list[AIMessageChunk] = []
        # The same for each sub-agent call streaming now, by stream namespace: a stop in the middle
        # of one is billed too (the provider bills what it generated).
        self._open_sub_calls: dict[tuple[str, ...], _OpenSubCall] = {}
        for saved in prior_cards:
            card = ToolCard(
                tool_call_id=str(saved["tool_call_id"]),
                tool=str(saved.get("tool") or ""),
                cn_tool=str(saved.get("cn_tool") or ""),
                args=dict(saved.get("args") or {}),
                agent_id=str(saved.get("agent_id") or MAIN_ID),
                content=saved.get("content"),
                error=bool(saved.get("error")),
                approved_by_rule=bool(saved.get("approved_by_rule")),
                review=str(saved.get("review") or ""),
                original_args=saved.get("original_args"),
            )
            self.transcript.tool_cards[card.tool_call_id] = card
            if card.tool == "task" and card.content is None:
                self.subagents.start(card.tool_call_id, card.args)
        self._edited_args = dict(edited_args or {})
        self.approved_by_rule: Callable[[str, str], bool] = lambda tool, call_id: False
        """``(tool, tool_call_id) -> bool``: set by the run from the user's approval rules."""

    def mark_reviews(self, reviews: dict[str, str]) -> None:
        """Record the person's decision on each reviewed card (``tool_call_id -> approve|edit|reject``).

        Call before :meth:`run`: an edited card keeps the model's proposal in ``original_args``
        (``run`` then shows the edited arguments), so the stored answer can say "edited by you",
        old → new, and "rejected by you" rather than a failure, after a reload as live.
        """
        words = {"approve": "approved", "edit": "edited", "reject": "rejected"}
        for call_id, kind in reviews.items():
            card = self.transcript.tool_cards.get(call_id)
            if card is None or kind not in words:
                continue
            card.review = words[kind]
            if kind == "edit" and card.original_args is None:
                card.original_args = dict(card.args)

    async def run(self, stream: AsyncIterator[Any]) -> AsyncIterator[ev.ContractEvent]:
        """Translate the ``(namespace, mode, data)`` stream. Exceptions propagate to the pipeline."""
        cards = self.transcript.tool_cards
        edits = {call_id: {"args": args} for call_id, args in self._edited_args.items() if call_id in cards}
        for event in self._on_edited_calls(edits, MAIN_ID):
            yield event
        async for namespace, mode, data in stream:
            main = len(namespace) == 0
            if mode == "messages":
                if main:
                    for event in self._on_message_chunk(main, *data):
                        yield event
                else:
                    self._on_sub_chunk(namespace, *data)
            elif mode == "updates":
                agent_id = MAIN_ID if main else self._agent_for(namespace, data)
                for event in self._on_update(main, agent_id, data, namespace):
                    yield event

    def _agent_for(self, namespace: tuple[str, ...], data: dict[str, Any]) -> str:
        """The sub-agent streaming under ``namespace``: a call it made that we know names it."""
        for update in data.values():
            for message in _messages_in(update):
                ids = [call.get("id") for call in getattr(message, "tool_calls", None) or []]
                ids.append(getattr(message, "tool_call_id", None))
                for call_id in ids:
                    card = self.transcript.tool_cards.get(call_id or "")
                    if card is not None and card.agent_id != MAIN_ID:
                        self.subagents.bind(namespace, card.agent_id)
        return self.subagents.agent_id_for(namespace)

    def open_calls(self) -> list[dict[str, Any]]:
        """Announced tool calls without a result yet, of every agent: ``{id, name, args}``."""
        return [
            {"id": card.tool_call_id, "name": card.tool, "args": card.args}
            for card in self.transcript.tool_cards.values()
            if card.content is None
        ]

    def _on_message_chunk(self, main: bool, chunk: Any, metadata: dict[str, Any]) -> list[ev.ContractEvent]:
        # Sub-agent text is the sub-agent's business; it reaches the answer only through `task`'s result.
        if not main or not isinstance(chunk, AIMessageChunk) or _is_internal_call(metadata):
            return []
        # Kept until the call's complete message arrives, so a call cut mid-stream can be billed.
        self._open_call.append(chunk)
        if len(self._open_call) >= OPEN_CALL_BATCH:
            self._open_call = [_merged(self._open_call)]
        out: list[ev.ContractEvent] = []
        reasoning = chunk.additional_kwargs.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            transcript = self.transcript
            transcript.reasoning.append(reasoning, (len(transcript.tool_cards), transcript.answer_chars))
            out.append(ev.ThinkingToken(content=reasoning))
        text = _text_of(chunk.content)
        if text:
            self.transcript.append_answer(text)
            out.append(ev.Token(content=text))
        return out

    def _on_sub_chunk(self, namespace: tuple[str, ...], chunk: Any, metadata: dict[str, Any]) -> None:
        """Keep a sub-agent call's chunk until its complete message arrives (no event: not the answer)."""
        if not isinstance(chunk, AIMessageChunk) or _is_internal_call(metadata):
            return
        call = self._open_sub_calls.get(namespace)
        if call is None:
            call = self._open_sub_calls[namespace] = _OpenSubCall(
                str(metadata.get("langgraph_checkpoint_ns") or "")
            )
        call.chunks.append(chunk)
        if len(call.chunks) >= OPEN_CALL_BATCH:
            call.chunks[:] = [_merged(call.chunks)]

    def settle_cut_call(self, input_estimate: int) -> AIMessageChunk | None:
        """Bill every model call that was streaming when the run stopped (the main one, sub-agents');
        returns the main call's streamed part (None if none was streaming).

        The main call's input is the latest main request's offline size, else the context so far,
        else ``input_estimate`` (the turn's text). A sub-agent's is booked not main-thread (the context
        occupancy stays) with the offline size of the request it sent — the one the provider bills —
        which :class:`~ventapp.agent.context_meter.InternalCallMeter` keeps by the model task's
        checkpoint namespace until the call ends; ``input_estimate`` only if that is unknown. Both
        are marked ``estimate`` unless the stream got as far as the provider's usage chunk.
        """
        meter = self.transcript.meter
        cut = _merged(self._open_call) if self._open_call else None
        if cut is not None:
            meter.observe_cut_call(cut, meter.prompt_estimate or meter.context_tokens or input_estimate)
            self._open_call = []
        for call in self._open_sub_calls.values():
            request = meter.open_request_estimate(call.checkpoint_ns) if call.checkpoint_ns else 0
            meter.observe_cut_call(_merged(call.chunks), request or input_estimate, main_thread=False)
        self._open_sub_calls.clear()
        return cut

    def _on_update(
        self, main: bool, agent_id: str, data: dict[str, Any], namespace: tuple[str, ...] = ()
    ) -> list[ev.ContractEvent]:
        out: list[ev.ContractEvent] = []
        for node, update in data.items():
            if node == "__interrupt__":
                out.extend(self._on_interrupt(update))
                continue
            if isinstance(update, dict) and isinstance(update.get(EDITED_CALLS_KEY), dict):
                out.extend(self._on_edited_calls(update[EDITED_CALLS_KEY], agent_id))
            if isinstance(update, dict) and main and "todos" in update and isinstance(update["todos"], list):
                self.transcript.todos = [dict(item) for item in update["todos"]]
                out.append(ev.UpdatedTodoList(todos=self.transcript.todos))
            for message in _messages_in(update):
                if isinstance(message, AIMessage):
                    out.extend(
                        self._on_ai_message(
                            message, main, agent_id, billed=node == MODEL_NODE, namespace=namespace
                        )
                    )
                elif isinstance(message, ToolMessage) and not node.startswith(HISTORY_NODE_PREFIX):
                    out.extend(self._on_tool_message(message, agent_id))
        return out

    def _on_ai_message(
        self,
        message: AIMessage,
        main: bool,
        agent_id: str,
        *,
        billed: bool = True,
        namespace: tuple[str, ...] = (),
    ) -> list[ev.ContractEvent]:
        if billed:
            self.transcript.meter.observe(message, main_thread=main)
            if main:
                self._open_call = []
            else:
                self._open_sub_calls.pop(namespace, None)
        if not billed:
            return []  # a middleware re-sent calls already announced (and billed) by a model node
        calls = [call for call in message.tool_calls if call.get("id") not in self.transcript.tool_cards]
        if not calls:
            return []
        names = [call["name"] for call in calls]
        labels = [label_for(name) for name in names]
        cn_agent = MAIN_AGENT_LABEL if main else self.subagents.label_of(agent_id)
        calling = f"正在调用{'、'.join(dict.fromkeys(labels))}"  # one tool called twice is named once
        out: list[ev.ContractEvent] = [
            ev.Executing(message=calling, cn_agent=cn_agent, tools=names, cn_tools=labels)
        ]
        for call, label in zip(calls, labels, strict=True):
            call_id = call.get("id") or f"call_{len(self.transcript.tool_cards)}"
            card = ToolCard(call_id, call["name"], label, dict(call.get("args") or {}), agent_id)
            card.approved_by_rule = self.approved_by_rule(card.tool, call_id)
            self.transcript.tool_cards[call_id] = card
            out.append(
                ev.ToolCall(
                    tool=card.tool,
                    cn_tool=label,
                    args=card.args,
                    agent_id=agent_id,
                    tool_call_id=call_id,
                    approved_by_rule=card.approved_by_rule,
                )
            )
            if card.tool == "task":
                started = self.subagents.start(call_id, card.args)
                out.append(ev.AgentStart(agent=started.type, cn_agent=started.label, agent_id=call_id))
        return out

    def _announced_elsewhere(self, call_id: str, tool: str, agent_id: str) -> ToolCard:
        # A run resumed after an approval: the call was announced by the run that paused.
        card = ToolCard(call_id, tool, label_for(tool), {}, agent_id)
        self.transcript.tool_cards[call_id] = card
        return card

    def _on_edited_calls(self, edited: dict[str, Any], agent_id: str) -> list[ev.ContractEvent]:
        """A reviewer edited calls before they ran: the cards show the arguments that executed."""
        out: list[ev.ContractEvent] = []
        for call_id, action in edited.items():
            if not isinstance(action, dict) or not isinstance(action.get("args"), dict):
                continue
            card = self.transcript.tool_cards.get(call_id)
            if card is None:
                card = self._announced_elsewhere(call_id, str(action.get("name") or ""), agent_id)
            if card.args != action["args"]:
                card.args = dict(action["args"])
                out.append(
                    ev.ToolCall(
                        tool=card.tool,
                        cn_tool=card.cn_tool,
                        args=card.args,
                        agent_id=card.agent_id,
                        tool_call_id=call_id,
                    )
                )
        return out

    def _on_tool_message(self, message: ToolMessage, agent_id: str) -> list[ev.ContractEvent]:
        card = self.transcript.tool_cards.get(message.tool_call_id)
        if card is None and message.name:
            card = self._announced_elsewhere(message.tool_call_id, message.name, agent_id)
        if card is None or card.content is not None:
            return []
        content = _text_of(message.content) if not isinstance(message.content, str) else message.content
        # The framework prefixes an edited call's result with a note for the model, and wraps a
        # rejection's reason in an English sentence; people see the result, or the reason.
        rejected = REJECTED_RESULT.match(content)
        if rejected is not None:
            content = rejected.group("reason")
        card.content = (
            content.split(EDITED_RESULT_MARKER, 1)[1]
            if content.startswith(EDIT_NOTE_PREFIX) and EDITED_RESULT_MARKER in content
            else content
        )
        card.error = message.status == "error"
        out: list[ev.ContractEvent] = [
            ev.ToolResult(
                tool=card.tool,
                cn_tool=card.cn_tool,
                content=card.content,
                error=card.error,
                agent_id=agent_id,
                tool_call_id=card.tool_call_id,
            )
        ]
        if card.tool == "task":
            finished = self.subagents.finish(card.tool_call_id)
            if finished is not None:
                if card.error:
                    out.append(
                        ev.AgentError(
                            agent=finished.type,
                            cn_agent=finished.label,
                            message=card.content[:500],
                            duration_ms=finished.duration_ms,
                            agent_id=card.tool_call_id,
                        )
                    )
                else:
                    out.append(
                        ev.AgentDone(
                            agent=finished.type,
                            cn_agent=finished.label,
                            duration_ms=finished.duration_ms,
                            agent_id=card.tool_call_id,
                        )
                    )
        if self.transcript.sources.add_tool_output(
            card.content, tool=card.tool, tool_call_id=card.tool_call_id
        ):
            out.append(ev.Citations(items=self.transcript.sources.items))
        return out

    def _on_interrupt(self, interrupts: Any) -> list[ev.ContractEvent]:
        pending = unique(interrupts)
        if self.transcript.interrupt is not None or not pending:
            return []
        event = to_event(pending[0], self.open_calls())
        self.transcript.interrupt = event
        return [event]
