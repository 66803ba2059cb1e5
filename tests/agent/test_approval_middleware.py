"""The approval middleware hands the model a rejection's reason as the reviewer wrote it."""

from __future__ import annotations

from langchain_core.messages import ToolCall

from ventapp.agent.approval_middleware import ReasonOnlyApprovalMiddleware

CALL = ToolCall(name="calculate", args={"expression": "7*6"}, id="call-1", type="tool_call")
CONFIG = {"allowed_decisions": ["approve", "edit", "reject"]}


def test_a_rejection_reads_as_the_bare_reason_with_the_librarys_status_and_id() -> None:
    reason = "用户拒绝了这次操作，没有说明原因。"
    call, message = ReasonOnlyApprovalMiddleware._process_decision(
        {"type": "reject", "message": reason}, CALL, CONFIG
    )
    assert call == CALL
    assert message is not None and message.content == reason
    assert message.tool_call_id == "call-1" and message.status == "error" and message.name == "calculate"


def test_approvals_and_reasonless_rejections_are_the_librarys() -> None:
    assert ReasonOnlyApprovalMiddleware._process_decision({"type": "approve"}, CALL, CONFIG) == (CALL, None)
    _, message = ReasonOnlyApprovalMiddleware._process_decision({"type": "reject"}, CALL, CONFIG)
    assert message is not None and "was not executed" in str(message.content)


def test_it_takes_the_stock_middlewares_place_by_name() -> None:
    assert ReasonOnlyApprovalMiddleware(interrupt_on={"calculate": True}).name == "HumanInTheLoopMiddleware"
