"""The answer being streamed: a pure reducer over contract events, and the batching pump.

The UI is the second sink of the run pipeline (DESIGN.md, "The one idea"): it folds
the very same typed events the SSE encoder sends into a :class:`LiveAnswer`.

* :func:`reduce_event` is pure: ``(LiveAnswer, event) -> LiveAnswer``. Fields that an
  event does not touch keep the *same object*, so a consumer can tell what changed
  with ``is`` and send only that (:func:`changed_fields`).
* :func:`pump` drives the reducer from an event stream and calls ``on_flush`` at most
  about every ``interval_s`` while text streams (tokens are batched, never sent one by
  one), at once for structural events (a tool card appears, a result lands), and on a
  timer when the stream stalls with text still unshown. Terminal events (``done``,
  ``error``) are not flushed: the caller commits the finished message once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from ventapp.agent import events as ev
from ventapp.agent.errors import RETRYABLE_CODES
from ventapp.agent.reasoning_text import reasoning_gap
from ventapp.agent.subagent_tracker import subagent_label
from ventapp.billing.guard import raisable_quota
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.state.interrupt_view import CARD_KINDS
from ventapp.state.usage_words import usage_footer
from ventapp.state.views import (
    STATUS_DONE,
    STATUS_ERROR,
    STATUS_STOPPED,
    STATUS_WAITING,
    UNANSWERED_NOTICE,
    ChatMessageView,
    CitationView,
    TodoView,
    ToolCardView,
    args_to_json,
    card_heading,
    card_output,
    citation_from,
    figure_paths,
    nested,
    plan_of,
    plan_verdict,
    stop_notice,
    todos_from,
    tool_label,
    tool_summary,
    worded_error,
)

FLUSH_INTERVAL_S = 0.05
"""Longest time streamed text waits before it is pushed to the browser."""

BATCHED_EVENTS = frozenset({"token", "thinking_token"})
"""Events that only grow text: shown in batches, never one state delta per event."""

TERMINAL_EVENTS = frozenset({"done", "error"})
"""Events that end the stream: the caller commits the finished message instead of a flush."""

INTERRUPT_NOTICE = "live.paused"
"""Message id of the note for a pause that has no card."""
STOPPED_CODE = "cancelled"
"""``error.code`` of a run stopped by the person (Stop button) or a departed client."""


@dataclass(frozen=True)
class LiveAnswer:
    """Everything the in-progress answer bubble shows. Immutable: reducers return a copy.

    Attributes:
        text: The answer so far (Markdown).
        reasoning: Streamed reasoning text, if any.
        status: The status line ("正在思考…", "正在执行 …"); cleared once text streams.
        tools: Tool cards in call order, one per ``tool_call_id``.
        todos: The latest todo list.
        citations: All sources so far (each ``citations`` event replaces the list).
        model_only: True when the run ended without any tool-backed source.
        notice: A neutral note: the run paused for input it has no card for, or a sub-agent failed.
        error: The run's failure sentence (``error.message``); empty when none.
        error_code: The failure's code, e.g. ``model_unconfigured``; ``cancelled`` when stopped.
        paused: True when the run stopped at an ``interrupt`` and waits for a person.
        interrupt: That ``interrupt`` event (the card is built from it).
        duration_ms: Set by ``done``, or by an ``error`` after the partial answer was saved (the
            stored figure, as a re-read shows it).
        usage: Likewise.
        lang: The UI language status lines, tool labels and notes are worded in (``zh-CN`` | ``en``);
            the contract's Chinese ``message``/``cn_tool`` texts are for the legacy client.
        reasoning_at: ``(tool cards, answer characters)`` when reasoning last streamed: reasoning
            arriving after either grew belongs to a later model call.
    """

    text: str = ""
    reasoning: str = ""
    status: str = ""
    tools: tuple[ToolCardView, ...] = ()
    todos: tuple[TodoView, ...] = ()
    citations: tuple[CitationView, ...] = ()
    model_only: bool = False
    notice: str = ""
    error: str = ""
    error_code: str = ""
    paused: bool = False
    interrupt: ev.Interrupt | None = None
    duration_ms: int | None = None
    usage: ev.Usage | None = None
    lang: str = DEFAULT_LANG
    reasoning_at: tuple[int, int] = (0, 0)


def _with_card(tools: tuple[ToolCardView, ...], card: ToolCardView) -> tuple[ToolCardView, ...]:
    """Replace the card with the same ``tool_call_id``, or append it."""
    for index, existing in enumerate(tools):
        if existing.tool_call_id == card.tool_call_id:
            return (*tools[:index], card, *tools[index + 1 :])
    return (*tools, card)


def _find_card(tools: tuple[ToolCardView, ...], tool_call_id: str) -> ToolCardView | None:
    return next((card for card in tools if card.tool_call_id == tool_call_id), None)


def reduce_event(live: LiveAnswer, event: ev.ContractEvent) -> LiveAnswer:
    """Fold one contract event into the live answer.

    Args:
        live: The answer so far.
        event: Any event of :data:`ventapp.agent.events.ContractEvent`.

    Returns:
        The new answer; ``live`` itself when the event changes nothing visible.
    """
    replace = dataclasses.replace
    match event:
        case ev.Token(content=content):
            if not content:
                return live
            return replace(live, text=live.text + content, status="")
        case ev.ThinkingToken(content=content):
            if not content:
                return live
            at = (len(live.tools), len(live.text))
            # A later model call's reasoning (after a tool or some answer) starts a paragraph of its own.
            gap = reasoning_gap(bool(live.reasoning), live.reasoning_at, at)
            return replace(live, reasoning=live.reasoning + gap + content, reasoning_at=at)
        case ev.Thinking() | ev.Executing() | ev.Progress():
            message = _status_text(event, live.lang)
            return live if message == live.status else replace(live, status=message)
        case ev.AgentStart(agent_id=agent_id, agent=agent) if agent_id != "main":
            return replace(
                live, status=t("live.subagent_start", live.lang, agent=subagent_label(agent, live.lang))
            )
        case ev.AgentError(agent=agent, message=message):
            name = subagent_label(agent, live.lang)
            return replace(live, notice=t("live.subagent_failed", live.lang, agent=name, message=message))
        case ev.ToolCall():
            previous = _find_card(live.tools, event.tool_call_id)
            label, description = card_heading(event.tool, event.cn_tool, event.args, live.lang)
            card = ToolCardView(
                tool_call_id=event.tool_call_id,
                tool=event.tool,
                cn_tool=label,
                args_json=args_to_json(event.args),
                agent_id=event.agent_id,
                description=description,
                plan=plan_of(event.tool, event.args),
            )
            if previous is not None:
                # The person's decision (marked when the card was answered) outlives an edit's new call event.
                card = replace(card, review=previous.review, old_args_json=previous.old_args_json)
            if previous is not None and previous.done:
                # A repeated call event must not wipe a result that already arrived.
                card = replace(
                    card, content=previous.content, error=previous.error, done=True, summary=previous.summary
                )
            return replace(live, tools=tuple(nested(_with_card(live.tools, card))))
        case ev.ToolResult():
            previous = _find_card(live.tools, event.tool_call_id)
            base = previous or ToolCardView(
                tool_call_id=event.tool_call_id,
                tool=event.tool,
                cn_tool=tool_label(event.tool, event.cn_tool, live.lang),
                agent_id=event.agent_id,
            )
            figures = [] if event.error else figure_paths(event.content)
            card = replace(
                base,
                content=card_output(event.content, event.error, live.lang),
                error=event.error,
                done=True,
                figures=figures,
                summary=tool_summary(event.content, live.lang, event.tool),
                review=base.review or plan_verdict(event.tool, event.content),
            )
            return replace(live, tools=tuple(nested(_with_card(live.tools, card))))
        case ev.UpdatedTodoList(todos=todos):
            return replace(live, todos=tuple(todos_from(todos)))
        case ev.Citations(items=items, model_only=model_only):
            return replace(live, citations=tuple(citation_from(c) for c in items), model_only=model_only)
        case ev.Interrupt(message=message, kind=kind):
            # Kinds with a card show it (the plan text included); others stay a note.
            notice = live.notice if kind in CARD_KINDS else message or t(INTERRUPT_NOTICE, live.lang)
            return replace(live, status="", notice=notice, paused=True, interrupt=event)
        case ev.Done(duration_ms=duration_ms, usage=usage):
            return replace(live, status="", duration_ms=duration_ms, usage=usage)
        case ev.Error(message=message, code=code, duration_ms=duration_ms, usage=usage):
            # A saved failure brings the footer a re-read shows (duration, the kept part's tokens).
            return replace(
                live, status="", error=message, error_code=code, duration_ms=duration_ms, usage=usage
            )
    return live


def _status_text(event: ev.Thinking | ev.Executing | ev.Progress, lang: str) -> str:
    """The status line in ``lang``: thinking, the tools being called, or a free-form progress note."""
    if isinstance(event, ev.Thinking):
        return t("live.thinking", lang)
    if isinstance(event, ev.Executing):
        names = zip(event.tools, [*event.cn_tools, *[""] * len(event.tools)], strict=False)
        # Two parallel calls of one tool are named once ("正在调用任务清单", not "任务清单、任务清单").
        labels = t("live.list_sep", lang).join(
            dict.fromkeys(tool_label(tool, cn_tool, lang) for tool, cn_tool in names)
        )
        return t("live.calling", lang, tools=labels)
    return event.message


def changed_fields(before: LiveAnswer, after: LiveAnswer) -> list[str]:
    """Names of the fields whose value differs (identity first, then equality)."""
    names = []
    for item in dataclasses.fields(LiveAnswer):
        old, new = getattr(before, item.name), getattr(after, item.name)
        if old is not new and old != new:
            names.append(item.name)
    return names


def message_status(live: LiveAnswer) -> str:
    """``stopped``, ``error`` when the run failed, ``waiting`` when it paused, else ``done``."""
    if live.error_code == STOPPED_CODE:
        return STATUS_STOPPED
    if live.error:
        return STATUS_ERROR
    if live.paused:
        return STATUS_WAITING
    return STATUS_DONE


def to_message(live: LiveAnswer, message_id: str | None = None) -> ChatMessageView:
    """The finished assistant bubble for the transcript.

    A stopped answer keeps its partial text and no error; the bubble shows one quiet "Stopped"
    note (the stored copy's ``[stopped]`` marker is for the legacy API and never shown).
    """
    status = message_status(live)
    text = live.text.rstrip("\n")  # a resumed answer that added no text ends with its separator
    notice = live.notice
    if live.paused and not notice:
        notice = t(UNANSWERED_NOTICE, live.lang)
    if status == STATUS_STOPPED and not notice:  # the server shut down under it: say so
        notice = stop_notice(live.error_code, live.error, live.lang)
    usage = live.usage
    error, detail = (
        ("", "") if status == STATUS_STOPPED else worded_error(live.error_code, live.error, live.lang)
    )
    return ChatMessageView(
        id=message_id or uuid.uuid4().hex,
        role="assistant",
        content=text,
        reasoning=live.reasoning,
        tools=list(live.tools),
        todos=list(live.todos),
        citations=list(live.citations),
        model_only=live.model_only and not live.error,
        notice=notice,
        error=error,
        error_detail=detail,
        usage_link=live.error_code == "quota" and raisable_quota(live.error) is not None,
        footer=usage_footer(usage, live.duration_ms, live.lang),
        status=status,
        context_tokens=usage.context_tokens if usage else 0,
        context_limit=usage.context_limit if usage else 0,
        retryable=status == STATUS_ERROR and live.error_code in RETRYABLE_CODES,
    )


@dataclass(frozen=True)
class Said:
    """What the page's ``aria-live`` region says, kept apart from its words.

    Kept so that a language switch can say it again in the new language (:meth:`words`).
    ``key``: an ``a11y.*`` catalogue id (``""``: nothing is said); ``error_code``/``error``: the
    failure ``a11y.failed`` words.
    """

    key: str = ""
    error_code: str = ""
    error: str = ""

    def words(self, lang: str) -> str:
        """The sentence in ``lang`` (``""`` when nothing is said)."""
        if not self.key:
            return ""
        if self.key == "a11y.failed":
            return t(self.key, lang, error=worded_error(self.error_code, self.error, lang)[0])
        return t(self.key, lang)


def said_at_end(final: LiveAnswer, waiting: bool) -> Said:
    """What the live region says when a run ends: complete, stopped, failed, quota, or waiting."""
    if final.error and final.error_code == "quota":  # not a failure: the day's allowance ran out
        return Said("a11y.quota")
    if final.error and final.error_code != STOPPED_CODE:
        return Said("a11y.failed", final.error_code, final.error)
    if waiting:
        return Said("a11y.waiting")
    return Said("a11y.stopped" if message_status(final) == STATUS_STOPPED else "a11y.done")


def announcement(final: LiveAnswer, waiting: bool, lang: str | None = None) -> str:
    """The sentence screen readers hear when a run ends (the ``aria-live`` region of the chat page).

    ``lang``: the page's language now (it may have been switched while the answer streamed);
    default the answer's own.
    """
    return said_at_end(final, waiting).words(lang or final.lang)


def live_from_message(message: ChatMessageView, lang: str = DEFAULT_LANG) -> LiveAnswer:
    """A stored paused answer as the live answer its card is shown in (after a reload)."""
    return LiveAnswer(
        lang=lang,
        text=message.content,
        reasoning=message.reasoning,
        tools=tuple(message.tools),
        todos=tuple(message.todos),
        citations=tuple(message.citations),
        paused=True,
    )


def continued(live: LiveAnswer, status: str) -> LiveAnswer:
    """Where a resumed run starts: the paused answer, its card gone, a separator before new text.

    The stored message joins the two parts with a blank line; so does the bubble.
    """
    text = live.text.rstrip("\n")
    return dataclasses.replace(
        live,
        text=text + "\n\n" if text else "",
        status=status,
        paused=False,
        interrupt=None,
        error="",
        error_code="",
    )


def failed_answer(message: str, code: str = "internal", lang: str = DEFAULT_LANG) -> LiveAnswer:
    """A live answer that is only an error sentence (admission refused, runtime not ready)."""
    return LiveAnswer(error=message, error_code=code, lang=lang)


class _End:
    pass


@dataclass
class _Failed:
    exc: BaseException


_END = _End()

FlushFn = Callable[[LiveAnswer, LiveAnswer], Awaitable[None]]
"""``on_flush(previously_flushed, current)``: push what changed to the UI."""


async def _drain(events: AsyncIterator[ev.ContractEvent], queue: asyncio.Queue[object]) -> None:
    try:
        async for event in events:
            queue.put_nowait(event)
    except Exception as exc:  # handed to the consumer, which re-raises it
        queue.put_nowait(_Failed(exc))
    finally:
        queue.put_nowait(_END)


@dataclass(frozen=True)
class Flush:
    """A point where the UI should catch up: from ``before`` (last shown) to ``after``.

    ``final`` marks the last one, after the stream ended: ``after`` is then the whole
    answer (terminal events included), which the caller commits instead of showing.
    """

    before: LiveAnswer
    after: LiveAnswer
    final: bool = False


async def flushes(
    events: AsyncIterator[ev.ContractEvent],
    *,
    interval_s: float = FLUSH_INTERVAL_S,
    live: LiveAnswer | None = None,
) -> AsyncIterator[Flush]:
    """Reduce a run's events into a :class:`LiveAnswer`, yielding a :class:`Flush` in batches.

    The stream is read by a helper task into a queue, so a stalled stream cannot hold
    back text that already arrived: it is flushed when ``interval_s`` has passed. Text
    is flushed at most about every ``interval_s``, structural events (a tool card, a
    result) at once, terminal events (``done``/``error``) never: the last item is the
    ``final`` one.

    Raises:
        Exception: Whatever iterating ``events`` raised (the pipeline itself turns
            failures into ``error`` events, so this means a bug).
    """
    loop = asyncio.get_running_loop()
    live = live or LiveAnswer()
    flushed = live
    last_flush = -math.inf
    queue: asyncio.Queue[object] = asyncio.Queue()
    producer = asyncio.create_task(_drain(events, queue), name="ventagent-ui-event-drain")
    try:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                if live is flushed:
                    item = await queue.get()
                else:
                    wait = last_flush + interval_s - loop.time()
                    if wait <= 0:
                        yield Flush(flushed, live)
                        flushed, last_flush = live, loop.time()
                        continue
                    try:
                        item = await asyncio.wait_for(queue.get(), wait)
                    except TimeoutError:
                        yield Flush(flushed, live)
                        flushed, last_flush = live, loop.time()
                        continue
            if item is _END:
                yield Flush(flushed, live, final=True)
                return
            if isinstance(item, _Failed):
                raise item.exc
            event: ev.ContractEvent = item  # type: ignore[assignment]  # the queue holds events otherwise
            live = reduce_event(live, event)
            if live is flushed or event.type in TERMINAL_EVENTS:
                continue
            if event.type not in BATCHED_EVENTS or loop.time() - last_flush >= interval_s:
                yield Flush(flushed, live)
                flushed, last_flush = live, loop.time()
    finally:
        if not producer.done():
            producer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await producer


async def pump(
    events: AsyncIterator[ev.ContractEvent],
    on_flush: FlushFn,
    *,
    interval_s: float = FLUSH_INTERVAL_S,
    live: LiveAnswer | None = None,
) -> LiveAnswer:
    """:func:`flushes` with a callback: ``on_flush(before, after)`` at each flush; returns the final answer.

    Raises:
        Exception: Whatever iterating ``events`` raised.
    """
    final = live or LiveAnswer()
    async for flush in flushes(events, interval_s=interval_s, live=live):
        if flush.final:
            final = flush.after
            break
        await on_flush(flush.before, flush.after)
    return final
