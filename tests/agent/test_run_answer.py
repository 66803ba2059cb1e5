"""What a run keeps when it ends: priced usage, the summed resumed answer, the final record."""

from __future__ import annotations

from typing import Any

from ventapp.agent import events as ev
from ventapp.agent.errors import (
    CANCELLED,
    CANCELLED_EARLY,
    CLIENT_GONE,
    CLIENT_GONE_EARLY,
    INTERNAL,
    TIMED_OUT,
    RunFailure,
    fixed_failure_key,
)
from ventapp.agent.kernel import RunTranscript, ToolCard
from ventapp.agent.reasoning_text import CUT_MARKER, MAX_STORED_REASONING_CHARS
from ventapp.agent.run_answer import CANCELLED_MARKER, final_record, parked_record, priced, whole_answer
from ventapp.billing.pricing import Price
from ventapp.billing.usage import CallUsage
from ventapp.i18n import MESSAGES

CALLS = [CallUsage("a", 1_000_000, 0, "provider"), CallUsage("b", 0, 500_000, "provider")]


def _record(status: str, transcript: RunTranscript, failure: RunFailure | None = None) -> dict[str, Any]:
    return final_record(
        run_id="r1",
        session_id="s1",
        status=status,
        failure=failure,
        transcript=transcript,
        usage=ev.Usage(input_tokens=3, output_tokens=4),
        first_token_ms=12,
    )


def test_priced_costs_each_call_at_the_price() -> None:
    price = Price(
        model="m", input_micros_per_mtok=2_000_000, output_micros_per_mtok=8_000_000, currency="CNY"
    )
    usage = priced(ev.Usage(input_tokens=1_000_000, output_tokens=500_000), price, CALLS)
    assert (usage.cost_micros, usage.currency) == (6_000_000, "CNY")
    assert priced(ev.Usage(), None, CALLS) == ev.Usage(), "no price: unchanged"


def test_whole_answer_adds_the_paused_part() -> None:
    usage = ev.Usage(
        input_tokens=10, output_tokens=5, total_tokens=15, model_calls=1, usage_source="provider"
    )
    prior = {
        "input_tokens": 7,
        "output_tokens": 3,
        "total_tokens": 10,
        "model_calls": 2,
        "usage_source": "estimate",
    }
    whole = whole_answer(usage, prior)
    assert (whole.input_tokens, whole.output_tokens, whole.total_tokens, whole.model_calls) == (17, 8, 25, 3)
    assert whole.usage_source == "estimate", "an estimated part makes the whole an estimate"
    assert whole_answer(usage, {}) is usage


def test_final_record_of_a_disconnect_marks_the_answer_and_says_client_gone() -> None:
    transcript = RunTranscript()
    transcript.append_answer("Partial")
    record = _record("cancelled", transcript)
    assert record["error_code"] == CLIENT_GONE.code and record["error"] == CLIENT_GONE.message
    assert record["answer"]["content"] == "Partial" + CANCELLED_MARKER
    assert record["answer"]["status"] == "cancelled" and record["answer"]["session_id"] == "s1"
    assert (record["input_tokens"], record["output_tokens"], record["first_token_ms"]) == (3, 4, 12)


def test_an_answer_stopped_before_its_first_token_is_stored_as_the_bare_marker() -> None:
    """try16: history read '' where the model's thread held "[stopped]" for the same answer."""
    record = _record("cancelled", RunTranscript())
    assert record["answer"]["content"] == CANCELLED_MARKER.strip() == "[stopped]"


def test_final_record_keeps_a_failure_and_tool_cards_but_not_an_empty_success() -> None:
    assert _record("success", RunTranscript())["answer"] is None
    failed = _record("failed", RunTranscript(), TIMED_OUT)
    assert failed["answer"]["content"] == "" and failed["error_code"] == TIMED_OUT.code
    transcript = RunTranscript()
    transcript.tool_cards["c1"] = ToolCard(tool_call_id="c1", tool="calc", cn_tool="计算", args={})
    paused = _record("waiting_input", transcript)
    assert (
        paused["answer"]["status"] == "waiting" and paused["answer"]["tool_calls"][0]["tool_call_id"] == "c1"
    )


def test_parked_record_carries_its_settlement_only_when_there_are_calls() -> None:
    record = _record("failed", RunTranscript(), TIMED_OUT)
    parked = parked_record(record, session_id="s1", user_name="u", model="m", calls=CALLS)
    assert parked["finished_at"] and parked["settlement"]["run_id"] == "r1"
    assert parked_record(record, session_id="s1", user_name="u", model="m", calls=[])["settlement"] is None


def test_the_answer_keeps_its_reasoning_stopped_or_not_and_caps_it() -> None:
    transcript = RunTranscript()
    transcript.reasoning.append("Check the fan.", (0, 0))
    transcript.append_answer("Partial")
    stopped = _record("cancelled", transcript)["answer"]
    assert stopped["reasoning"] == "Check the fan." and stopped["content"] == "Partial" + CANCELLED_MARKER
    thinking_only = RunTranscript()
    thinking_only.reasoning.append("Nothing to say.", (0, 0))
    assert _record("success", thinking_only)["answer"]["reasoning"] == "Nothing to say."
    assert _record("failed", RunTranscript(), TIMED_OUT)["answer"]["reasoning"] is None

    long = RunTranscript()
    long.reasoning.append("x" * (MAX_STORED_REASONING_CHARS + 10), (0, 0))
    kept = _record("success", long)["answer"]["reasoning"]
    assert kept == "x" * MAX_STORED_REASONING_CHARS + CUT_MARKER


def test_a_stop_before_any_answer_does_not_claim_a_kept_partial_answer() -> None:
    """try18: "已停止，已保留目前的部分回答。" over an answer that was only "[stopped]"."""
    early = _record("cancelled", RunTranscript(), CANCELLED)
    assert early["error"] == CANCELLED_EARLY.message != CANCELLED.message
    assert MESSAGES["zh-CN"][fixed_failure_key(early["error_code"], early["error"]) or ""] == (
        "已停止，还没有生成任何回答。"
    )
    gone = _record("cancelled", RunTranscript())
    assert gone["error"] == CLIENT_GONE_EARLY.message and fixed_failure_key("cancelled", gone["error"])
    with_text = RunTranscript()
    with_text.append_answer("Partial")
    assert _record("cancelled", with_text, CANCELLED)["error"] == CANCELLED.message, "text was kept"
    with_card = RunTranscript()
    with_card.tool_cards["c1"] = ToolCard(tool_call_id="c1", tool="calc", cn_tool="计算", args={})
    assert _record("failed", with_card, TIMED_OUT)["error"] == TIMED_OUT.message, "a tool card was kept"
    assert _record("failed", RunTranscript(), INTERNAL)["error"] == INTERNAL.message, "not a stop"
