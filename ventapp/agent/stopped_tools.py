"""Tool results of a stopped run, kept in the thread so the next turn's model sees them.

Why: a run stopped (Stop, disconnect, timeout) or failed while the model's tool calls ran cuts the
``tools`` superstep. The calls that had finished wrote their ``ToolMessage`` only as pending writes
of that step, which LangGraph drops when the next turn's input starts a new run; the checkpoint keeps
the ``AIMessage`` with every call unanswered, and
:class:`~ventapp.agent.nodeless_middleware.RequestPatchToolCallsMiddleware` then tells the model that
each of them "did not complete" — a tool that ran (and may have written files) is reported as not
run, and the model may run it again. :func:`record_cut_turn` writes the finished ones into the
state as the ``tools`` node would have; the calls still running when the run stopped stay unanswered
and are patched as before.

Likewise a run stopped or failed while the model was streaming its answer (or before its first
token): the model node never finished, so the thread ended on the user's message, and the next turn
sent two user messages in a row — which chat templates that require alternating roles refuse, and
which hides from the model what the person already read. :func:`record_cut_turn` adds the streamed
part as the model's message, with the stored answer's ``[stopped]`` marker, or ``[failed]`` for a
failed run (only the marker when nothing had streamed yet). The next question is then the
request's last user message on its own, as the person asked it (try17: joined to a question the
model server had failed on, it failed again with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage

from ventapp.agent.kernel import MAIN_ID, ToolCard
from ventapp.agent.run_answer import CANCELLED_MARKER

TOOLS_NODE = "tools"
"""The graph node that runs the model's tool calls (langchain's agent factory)."""

MODEL_NODE = "model"
"""The graph node that calls the model."""

FAILED_MARKER = "[failed]"
"""The model's message in the thread for a call its run failed in (the model server refused it, a
timeout); the thread's counterpart of the failed bubble, never stored as the answer's text."""


def _pending_results(snapshot: Any) -> dict[str, ToolMessage]:
    """``tool_call_id -> ToolMessage`` written by the cut step's finished tasks (not yet in the checkpoint)."""
    found: dict[str, ToolMessage] = {}
    for task in snapshot.tasks or ():
        result = task.result if isinstance(task.result, Mapping) else {}
        for message in result.get("messages") or ():
            if isinstance(message, ToolMessage):
                found[message.tool_call_id] = message
    return found


def missing_results(snapshot: Any, cards: Mapping[str, ToolCard]) -> list[ToolMessage]:
    """The results to add: the last model call's main-agent calls that finished but the checkpoint lacks.

    Args:
        snapshot: The thread's live ``StateSnapshot`` (``graph.aget_state``): its ``values`` already
            include the finished tasks' pending writes, its ``tasks`` carry them as ``result``.
        cards: The run's tool cards by ``tool_call_id``; a call counts as finished when its card has
            ``content`` (its ``tool_result`` was streamed) and belongs to the main agent.

    Returns:
        One ``ToolMessage`` per such call, in the model's call order: the raw message the tool node
        produced when the cut step's pending writes hold it (exactly what the model would have read),
        else one built from the card (its text and error status).
    """
    messages = list((snapshot.values or {}).get("messages") or ())
    last = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None)
    if last is None or not messages[last].tool_calls:
        return []
    pending = _pending_results(snapshot)
    kept = {
        m.tool_call_id
        for m in messages[last + 1 :]
        if isinstance(m, ToolMessage) and m.tool_call_id not in pending
    }
    out: list[ToolMessage] = []
    for call in messages[last].tool_calls:
        call_id = call.get("id") or ""
        card = cards.get(call_id)
        if call_id in kept or card is None or card.agent_id != MAIN_ID or card.content is None:
            continue
        out.append(
            pending.get(call_id)
            or ToolMessage(
                content=card.content,
                tool_call_id=call_id,
                name=call["name"],
                status="error" if card.error else "success",
            )
        )
    return out


def cut_answer(snapshot: Any, cut: AIMessageChunk | None, *, stopped: bool) -> AIMessage | None:
    """The model message to add for a call the run cut off, or None when the thread needs none.

    Args:
        snapshot: The thread's ``StateSnapshot``; only a thread that ends on the user's message or a
            tool result (the model's turn to speak) gets one.
        cut: The main model call's streamed part (:meth:`Kernel.settle_cut_call`), or None.
        stopped: The run was stopped (Stop, disconnect): the ``[stopped]`` marker; else it failed
            (the model server refused the call, a timeout): :data:`FAILED_MARKER`.

    Returns:
        ``AIMessage(content=<streamed text> + "\n\n" + marker)``, or the marker alone when
        nothing had streamed; tool calls the cut call had begun are left out (they never ran).
    """
    messages = list((snapshot.values or {}).get("messages") or ())
    if not messages or not isinstance(messages[-1], HumanMessage | ToolMessage):
        return None
    text = cut.text if cut is not None else ""
    marker = CANCELLED_MARKER.strip() if stopped else FAILED_MARKER
    return AIMessage(content=f"{text}\n\n{marker}" if text.strip() else marker)


async def record_cut_turn(
    graph: Any,
    config: dict[str, Any],
    cards: Mapping[str, ToolCard],
    cut: AIMessageChunk | None = None,
    *,
    stopped: bool = True,
) -> int:
    """Write a cut run's trace into the thread: its finished main-agent tool results, else its cut answer.

    Args:
        graph: The compiled agent graph the run streamed (nodes ``model`` and ``tools``).
        config: ``{"configurable": {"thread_id": <session id>, ...}}`` of the run.
        cards: The run's tool cards (:attr:`RunTranscript.tool_cards`).
        cut: The main model call the run cut off mid-stream, if any (:func:`cut_answer`).
        stopped: The run was stopped rather than failed (:func:`cut_answer`).

    Returns:
        How many messages were written (0: nothing missing, and no checkpoint was added).

    Raises:
        Whatever the checkpointer raises; the caller logs it and finalises anyway.
    """
    snapshot = await graph.aget_state(config)
    results = missing_results(snapshot, cards)
    if results:
        await graph.aupdate_state(config, {"messages": results}, as_node=TOOLS_NODE)
        return len(results)
    answer = cut_answer(snapshot, cut, stopped=stopped)
    if answer is None:
        return 0
    await graph.aupdate_state(config, {"messages": [answer]}, as_node=MODEL_NODE)
    return 1
