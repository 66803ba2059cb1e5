"""The answer a run keeps: what it cost, and the record saved (or parked) when it ends.

Pure functions over a run's :class:`~ventapp.agent.kernel.RunTranscript`, used by
:class:`~ventapp.agent.chat_run.ChatRun` for the partial-answer saver while it streams and for
its finalisation; nothing here touches the database or the event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ventapp.agent import events as ev
from ventapp.agent.errors import CLIENT_GONE, RunFailure, before_any_answer
from ventapp.agent.kernel import RunTranscript
from ventapp.agent.reasoning_text import stored_reasoning
from ventapp.billing.pricing import Price
from ventapp.billing.settlement import spool_payload
from ventapp.billing.usage import CallUsage
from ventapp.db.models import utcnow
from ventapp.db.turn_writes import ANSWER_USAGE_SUMS

CANCELLED_MARKER = "\n\n[stopped]"
"""Appended to a partial answer saved after a stop or a disconnect."""

_ANSWER_STATUS = {"success": "complete", "waiting_input": "waiting"}
"""A run's status -> its answer's status (the others are the same word)."""


def whole_answer(usage: ev.Usage, prior: dict[str, Any]) -> ev.Usage:
    """Add the paused part of a resumed answer, so ``done`` matches what the answer cost.

    Args:
        usage: This run's usage.
        prior: The paused part's saved usage (a ``Usage`` dump; empty for a fresh run).

    Returns:
        The sum; ``usage_source`` is ``estimate`` when either part was estimated.
    """
    if not prior:
        return usage
    summed = {key: getattr(usage, key) + int(prior.get(key) or 0) for key in ANSWER_USAGE_SUMS}
    estimated = "estimate" in (usage.usage_source, prior.get("usage_source"))
    return usage.model_copy(
        update={
            **summed,
            "usage_source": "estimate" if estimated else usage.usage_source,
            "currency": usage.currency or prior.get("currency"),
        }
    )


def priced(usage: ev.Usage, price: Price | None, calls: Sequence[CallUsage]) -> ev.Usage:
    """Put the cost of ``calls`` at ``price`` on ``usage`` (unchanged when there is no price).

    Each call is rounded like its ledger row, so the footer equals what is booked.
    """
    if price is None:
        return usage
    cost = sum(price.cost_micros(c.input_tokens, c.output_tokens) for c in calls)
    return usage.model_copy(update={"cost_micros": cost, "currency": price.currency})


def answer_so_far(
    session_id: str, transcript: RunTranscript, content: str, usage: ev.Usage, status: str | None = None
) -> dict[str, Any]:
    """The assistant message as saved: ``{session_id, content, reasoning, tool_calls, citations, usage[, status]}``.

    ``reasoning`` is the model's, capped (:func:`~ventapp.agent.reasoning_text.stored_reasoning`);
    None when it gave none.
    """
    answer: dict[str, Any] = {
        "session_id": session_id,
        "content": content,
        "reasoning": stored_reasoning(transcript.reasoning.text) or None,
        "tool_calls": [card.to_dict() for card in transcript.tool_cards.values()],
        "citations": [item.model_dump(mode="json") for item in transcript.sources.items],
        "usage": usage.model_dump(mode="json"),
    }
    if status is not None:
        answer["status"] = status
    return answer


def as_ended(failure: RunFailure, transcript: RunTranscript) -> RunFailure:
    """``failure`` worded for what the run left: a stop before any answer text, reasoning or tool
    card does not say "the partial answer has been kept" (:func:`ventapp.agent.errors.before_any_answer`)."""
    if transcript.answer or transcript.tool_cards or transcript.reasoning.chars:
        return failure
    return before_any_answer(failure)


def final_record(
    *,
    run_id: str,
    session_id: str,
    status: str,
    failure: RunFailure | None,
    transcript: RunTranscript,
    usage: ev.Usage,
    first_token_ms: int | None,
) -> dict[str, Any]:
    """The keyword arguments of :func:`ventapp.db.turn_writes.finalise_run` for a run that ended.

    A cancelled run without a failure lost its consumer (``client_gone``); a cancelled answer
    gets :data:`CANCELLED_MARKER` (the marker alone when nothing had streamed). ``answer`` is None when there is nothing to keep (a success or
    pause with no text, reasoning or tool card).
    """
    if status == "cancelled" and failure is None:
        failure = CLIENT_GONE  # the consumer left without a stop request (disconnect)
    if failure is not None:
        failure = as_ended(failure, transcript)
    answer = transcript.answer
    if status == "cancelled":
        # Stopped before its first token: the bare marker, as the model's thread holds it (try16).
        answer = answer + CANCELLED_MARKER if answer else CANCELLED_MARKER.strip()
    keep = answer or transcript.tool_cards or transcript.reasoning.chars or status in ("failed", "cancelled")
    return {
        "run_id": run_id,
        "status": status,
        "answer": answer_so_far(session_id, transcript, answer, usage, _ANSWER_STATUS.get(status, status))
        if keep
        else None,
        "error": failure.message if failure else None,
        "error_code": failure.code if failure else None,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "first_token_ms": first_token_ms,
    }


def parked_record(
    record: dict[str, Any], *, session_id: str, user_name: str, model: str, calls: Sequence[CallUsage]
) -> dict[str, Any]:
    """``record`` as the spool keeps it: with its finish time and the settlement of ``calls``."""
    return {
        **record,
        "finished_at": utcnow().isoformat(),
        "settlement": spool_payload(
            run_id=record["run_id"],
            session_id=session_id,
            user_name=user_name,
            model=model,
            calls=calls,
            occurred_at=utcnow(),
        )
        if calls
        else None,
    }
