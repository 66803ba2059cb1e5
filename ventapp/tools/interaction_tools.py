"""Tools that pause the run for a person (spec 002, "Agent 人机交互").

Each calls LangGraph's ``interrupt``: the run stops with its state checkpointed and
an ``interrupt`` frame goes to the client; ``POST /api/chat/resume`` continues the
same checkpoint with ``Command(resume=value)``, and ``interrupt`` returns that value
here. The registry lets LangGraph's interrupt signal through its error wrapper.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from ventapp.tools.registry import register

MAX_QUESTIONS = 3


@register(
    group="交互",
    label="询问用户",
    label_en="Ask the user",
    summary="Ask the user one to three questions and wait for the answers.",
)
def ask_user(questions: list[str]) -> str:
    """Ask the user one to three short questions and wait for their answers.

    Use this only when a value you need is missing and cannot be looked up or assumed
    safely (for example the airway cross-section or the number of people in a heading).

    Args:
        questions: One to three questions, each a complete sentence.

    Returns:
        The user's answers, one line per question.
    """
    asked = [str(question).strip() for question in questions if str(question).strip()]
    if not 1 <= len(asked) <= MAX_QUESTIONS:
        raise ValueError(f"ask between 1 and {MAX_QUESTIONS} questions, got {len(asked)}")
    reply: Any = interrupt({"type": "ask_user", "questions": asked})
    answers = reply.get("answers", []) if isinstance(reply, dict) else [reply]
    return "\n".join(
        f"Q: {question}\nA: {answers[index] if index < len(answers) else '(no answer)'}"
        for index, question in enumerate(asked)
    )


@register(
    group="交互",
    label="计划审批",
    label_en="Plan approval",
    summary="Submit a plan and wait for the user to approve it or send feedback.",
)
def request_plan_approval(plan: str) -> str:
    """Submit your plan to the user and wait for approval before doing the work.

    In plan mode, call this first with a numbered, concrete plan; do nothing else until
    it is approved. If the user sends feedback instead, revise the plan and submit again.

    Args:
        plan: The plan as Markdown: numbered steps, the tools each step uses, the expected result.

    Returns:
        "APPROVED" with any remarks, or "REJECTED" with the user's feedback.
    """
    if not plan.strip():
        raise ValueError("the plan is empty")
    reply: Any = interrupt({"type": "plan", "plan": plan})
    approved = bool(reply.get("approved")) if isinstance(reply, dict) else bool(reply)
    feedback = str(reply.get("feedback") or "").strip() if isinstance(reply, dict) else ""
    if approved:
        return "APPROVED" + (f": {feedback}" if feedback else ". Carry out the plan now.")
    return (
        f"REJECTED: {feedback or 'the user did not approve the plan'}. Revise the plan and submit it again."
    )
