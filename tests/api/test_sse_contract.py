"""The wire contract against spec 002's table ("SSE 事件契约"): the table is the source, not our code.

Changing a field name must fail here first (spec 000 §四: the contract only grows).
"""

from __future__ import annotations

import json

import pytest

from ventapp.agent import events as ev
from ventapp.api.sse import sse_frame

# Transcribed from spec 002: event -> fields the 1.5 frontend reads.
SPEC_FIELDS: dict[str, set[str]] = {
    "agent_start": {"agent", "cn_agent"},
    "thinking": {"message", "cn_agent"},
    "thinking_token": {"content"},
    "executing": {"message", "cn_agent", "tools", "cn_tools"},
    "tool_call": {"tool", "cn_tool", "args", "agent_id"},
    "tool_result": {"tool", "cn_tool", "content", "error", "agent_id"},
    "token": {"content"},
    "updated_todo_list": {"todos"},
    "progress": {"message"},
    "interrupt": {"tool_approval", "ask_user", "message"},
    "citations": {"items", "model_only"},
    "agent_done": {"agent", "cn_agent", "duration_ms", "progress", "context_tokens"},
    "agent_error": {"agent", "cn_agent", "message", "duration_ms"},
    "done": {"duration_ms", "usage"},
    "error": {"message", "code", "retry_after"},
}

SAMPLES: list[ev._Event] = [
    ev.AgentStart(agent="a", cn_agent="甲"),
    ev.Thinking(message="m", cn_agent="甲"),
    ev.ThinkingToken(content="r"),
    ev.Executing(message="m", cn_agent="甲", tools=["t"], cn_tools=["工"]),
    ev.ToolCall(tool="t", cn_tool="工", args={"x": 1}, tool_call_id="c1"),
    ev.ToolResult(tool="t", cn_tool="工", content="ok", tool_call_id="c1"),
    ev.Token(content="hi"),
    ev.UpdatedTodoList(todos=[{"content": "x", "status": "pending"}]),
    ev.Progress(message="p"),
    ev.Interrupt(message="wait"),
    ev.Citations(items=[ev.Citation(title="T", url="/kb/t")]),
    ev.AgentDone(agent="a", cn_agent="甲", duration_ms=1),
    ev.AgentError(agent="a", cn_agent="甲", message="m", duration_ms=1),
    ev.Done(duration_ms=1, usage=ev.Usage()),
    ev.Error(message="m", code="internal"),
]


def test_every_spec_event_exists_once() -> None:
    assert set(ev.EVENT_TYPES) == set(SPEC_FIELDS)
    assert {sample.type for sample in SAMPLES} == set(SPEC_FIELDS)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: event.type)
def test_event_carries_the_spec_fields(event: ev._Event) -> None:
    wire = event.to_wire()
    assert wire["type"] == event.type
    missing = SPEC_FIELDS[event.type] - set(wire)
    assert not missing, f"{event.type} lacks {missing}"


def test_tool_events_carry_tool_call_id() -> None:
    """Pitfall 12: the 2.0 addition that keys tool cards."""
    assert SAMPLES[4].to_wire()["tool_call_id"] == "c1"
    assert SAMPLES[5].to_wire()["tool_call_id"] == "c1"


def test_tool_events_carry_a_label_additively() -> None:
    """``label`` (the tool's display name in the request's language, filled by the API) is an
    addition: the spec's fields stay, ``cn_tool`` stays Chinese, and a frame without one parses."""
    for sample in SAMPLES[4:6]:
        wire = sample.to_wire()
        assert SPEC_FIELDS[sample.type] <= set(wire) and wire["label"] == ""
        labelled = sample.model_copy(update={"label": "Tool"})
        assert labelled.to_wire()["label"] == "Tool" and labelled.to_wire()["cn_tool"] == "工"
        assert ev.EVENT_ADAPTER.validate_python(labelled.to_wire()) == labelled


def test_usage_has_billing_and_context_figures() -> None:
    usage = ev.Done(duration_ms=5, usage=ev.Usage(input_tokens=3, output_tokens=2)).to_wire()["usage"]
    assert {"input_tokens", "output_tokens", "total_tokens", "context_tokens", "usage_source"} <= set(usage)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: event.type)
def test_frame_format(event: ev._Event) -> None:
    frame = sse_frame(event, session_id="s-1", trace_id="t-1")
    assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
    assert frame.count(b"\n") == 2, "one JSON line per frame"
    body = json.loads(frame[len(b"data: ") :])
    assert body["session_id"] == "s-1" and body["trace_id"] == "t-1" and body["type"] == event.type


def test_frame_without_trace_has_session_only() -> None:
    body = json.loads(sse_frame(ev.Token(content="x"), session_id="s", trace_id=None)[6:])
    assert body["session_id"] == "s" and "trace_id" not in body


def test_frames_are_utf8_not_escaped() -> None:
    assert "工".encode() in sse_frame(SAMPLES[4], session_id="s", trace_id=None)


def test_wire_dict_parses_back() -> None:
    for sample in SAMPLES:
        assert ev.EVENT_ADAPTER.validate_python(sample.to_wire()) == sample


def test_only_the_sse_module_writes_data_frames() -> None:
    """Spec 000 §四: nothing else hand-builds ``data:`` strings."""
    from pathlib import Path

    root = Path(ev.__file__).resolve().parents[1]
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "sse.py" and ('"data: ' in path.read_text() or 'b"data: ' in path.read_text())
    ]
    assert offenders == []


def test_numbered_frames_carry_seq_and_nothing_else_changes() -> None:
    """Issue 11: ``seq`` is additive; the frame stays one ``data: {json}`` line."""
    plain = json.loads(sse_frame(SAMPLES[6], session_id="s", trace_id="t")[6:])
    numbered_frame = sse_frame(SAMPLES[6], session_id="s", trace_id="t", seq=7)
    numbered = json.loads(numbered_frame[6:])
    assert numbered_frame.startswith(b"data: ") and numbered_frame.count(b"\n") == 2
    assert numbered == {**plain, "seq": 7}
    assert set(ev.TRANSPORT_FIELDS) == {"session_id", "trace_id", "seq"}


def test_done_lists_workspace_links_additively() -> None:
    """``workspace_links`` (the saved answer's ``/workspace/…`` files, as the history lists them) is
    an addition to ``done``: the spec's fields stay, and an answer without files lists none."""
    plain = ev.Done(duration_ms=1, usage=ev.Usage()).to_wire()
    assert SPEC_FIELDS["done"] <= set(plain) and plain["workspace_links"] == []
    link = {
        "path": "/workspace/results/net.png",
        "url": "/api/sessions/s/files?path=/workspace/results/net.png",
    }
    linked = ev.Done(duration_ms=1, usage=ev.Usage(), workspace_links=[link])
    assert linked.to_wire()["workspace_links"] == [link]
    assert ev.EVENT_ADAPTER.validate_python(linked.to_wire()) == linked
