"""Interrupts: what the client is shown, and how its answer becomes ``Command(resume=...)``.

Three kinds pause a run (spec 002, "Agent 人机交互"):

* tool approval — deepagents' ``HumanInTheLoopMiddleware``: value ``{"action_requests":
  [{name, args, description}], "review_configs": [...]}``; resumed with one decision per
  request, in order: ``approve`` | ``edit`` (``edited_action {name, args}``) | ``reject``
  (``message`` the model sees);
* questions — our ``ask_user`` tool: value ``{"type": "ask_user", "questions": [...]}``,
  resumed with ``{"answers": [...]}``;
* plan — our ``request_plan_approval`` tool: value ``{"type": "plan", "plan": str}``,
  resumed with ``{"approved": bool, "feedback": str}``.

The ``interrupt_token`` is LangGraph's ``Interrupt.id``: it changes with every new pause,
so a stale or repeated answer can be refused by comparing it with the checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage

from ventapp.agent import events as ev
from ventapp.i18n import LANGS, MESSAGES, t
from ventapp.i18n.templates import read_back
from ventapp.tools.registry import is_rememberable, tool_label

REJECT_REASON = "The user rejected this action."
"""The reason of a reject without one when no caller worded it (the API and the UI word their own)."""


def rejection_message(reason: str | None, lang: str) -> str:
    """What the model reads as a rejected call's result, in ``lang``: that the person rejected
    it, then their reason (``approval.reject_with_reason``) or that they gave none
    (``approval.reject_default_reason``).

    The bare reason alone read as the tool's output: "不需要计算，直接回答" came back as
    "结果是 不需要计算，直接回答。" (tester, 2026-12).
    """
    text = (reason or "").strip()
    if not text:
        return t("approval.reject_default_reason", lang)
    return t("approval.reject_with_reason", lang, reason=text)


def rejection_reason(content: str) -> str | None:
    """The person's reason read back from a rejected call's result (:func:`rejection_message`, in
    either language): ``""`` when they gave none, None when ``content`` is no rejection of ours."""
    for lang in LANGS:
        if read_back(MESSAGES[lang]["approval.reject_default_reason"], content) is not None:
            return ""
        values = read_back(MESSAGES[lang]["approval.reject_with_reason"], content)
        if values is not None:
            return values["reason"]
    return None


APPROVAL_REASON_TAIL = "needs your approval before it runs."
"""End of the description our approval requests carry in the graph (how :func:`reason_code`
recognises them, in new and stored checkpoints alike); clients never see it: the API words the
reason per request (:mod:`ventapp.api.wording`), the UI by ``reason_code``."""
REASON_NEEDS_APPROVAL = "needs_approval"
"""``reason_code`` of a call paused by our approval rule (``HITL_TOOLS``, the registry's
``requires_approval``): clients word it themselves, in their language."""
REASON_DEFAULT = "default"
"""``reason_code`` of a call paused with deepagents' own description ("Tool execution requires approval…")."""
_DEFAULT_REASON_HEAD = "Tool execution requires approval"


def approval_reason(name: str) -> str:
    """The description our approval request for tool ``name`` carries in the graph, e.g.
    ``"计算器 (calculate) needs your approval before it runs."``: a marker for :func:`reason_code`,
    never shown as is (it mixes languages)."""
    return f"{tool_label(name)} ({name}) {APPROVAL_REASON_TAIL}"


def reason_code(name: str, description: str) -> str:
    """What kind of reason an approval request carries: :data:`REASON_NEEDS_APPROVAL`,
    :data:`REASON_DEFAULT`, or ``""`` for a reason of its own (shown as written)."""
    if description == approval_reason(name):
        return REASON_NEEDS_APPROVAL
    return REASON_DEFAULT if description.startswith(_DEFAULT_REASON_HEAD) else ""


class ResumeInvalid(ValueError):
    """The client's answer does not fit the pending interrupt (HTTP 422).

    Args:
        key: The catalogue id of the sentence (``refusal.resume.*``; the API words it per request).
        loc: Where in the ``/api/chat/resume`` body the problem is, FastAPI's ``loc`` shape, e.g.
            ``["body", "decisions", 0, "args"]``.
        **params: The values the sentence names (e.g. ``expected``, ``got``).

    Attributes:
        key, loc, params: As given (``loc`` a list, ``params`` a dict).
    """

    def __init__(self, key: str, loc: Sequence[str | int], **params: object) -> None:
        super().__init__(key)
        self.key = key
        self.loc: list[str | int] = list(loc)
        self.params: dict[str, object] = params


@dataclass
class ResumeAnswer:
    """What a client sends to continue: only the part matching the interrupt's kind is used.

    ``decisions``: ``[{"type": "approve"} | {"type": "edit", "args": {...}} |
    {"type": "reject", "message": str}]``, an approve or edit optionally with ``"remember":
    "session" | "always"`` (an approval rule); ``answers``: one string per question;
    ``approved``/``feedback``: the plan verdict.
    """

    decisions: list[dict[str, Any]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    approved: bool | None = None
    feedback: str = ""


def unique(interrupts: Iterable[Any]) -> list[Any]:
    """Interrupts de-duplicated by id (a sub-agent's pause surfaces at its namespace and the root)."""
    seen: dict[str, Any] = {}
    for item in interrupts or ():
        seen.setdefault(str(getattr(item, "id", id(item))), item)
    return list(seen.values())


def open_calls_of(message: AIMessage | None) -> list[dict[str, Any]]:
    """The tool calls of one AI message as ``{id, name, args}`` candidates for :func:`to_event`."""
    if message is None:
        return []
    return [
        {"id": call.get("id") or "", "name": call["name"], "args": call.get("args") or {}}
        for call in message.tool_calls
    ]


def _call_ids(requests: Sequence[dict[str, Any]], open_calls: Sequence[dict[str, Any]]) -> list[str]:
    # A request names its tool and arguments, not its call id: take the open call with the same
    # name and arguments, else the first with the same name (an edit may have changed arguments).
    pending = list(open_calls)
    ids: list[str] = []
    for request in requests:
        same_name = [call for call in pending if call.get("name") == request.get("name")]
        match = next((call for call in same_name if call.get("args") == request.get("args")), None)
        match = match or (same_name[0] if same_name else None)
        if match is not None:
            pending.remove(match)
            ids.append(str(match.get("id") or ""))
    return ids


def to_event(item: Any, open_calls: Sequence[dict[str, Any]] = ()) -> ev.Interrupt:
    """The ``interrupt`` event for one pending LangGraph ``Interrupt`` (same shape for frame and route).

    Args:
        item: The pending interrupt (``.id`` is the ``interrupt_token``, ``.value`` its payload).
        open_calls: Tool calls announced and not yet answered, ``{id, name, args}``, from the
            main agent *and* its sub-agents — a pause inside a sub-agent names the sub-agent's call.
    """
    value = getattr(item, "value", item)
    token = getattr(item, "id", None)
    if isinstance(value, dict) and value.get("action_requests"):
        requests = value["action_requests"]
        listed = [
            {
                "tool": r.get("name", ""),
                "args": r.get("args", {}),
                "reason": r.get("description", ""),
                "reason_code": reason_code(str(r.get("name", "")), str(r.get("description") or "")),
            }
            for r in requests
        ]
        approval = {**listed[0], "side_effect": True, "count": len(listed), "requests": listed}
        return ev.Interrupt(
            kind="tool_approval",
            tool_approval=approval,
            interrupt_token=token,
            tool_call_ids=_call_ids(requests, open_calls),
        )
    if isinstance(value, dict) and value.get("type") == "ask_user":
        return ev.Interrupt(
            kind="ask_user", ask_user={"questions": list(value.get("questions", []))}, interrupt_token=token
        )
    if isinstance(value, dict) and value.get("type") == "plan":
        return ev.Interrupt(kind="plan", message=str(value.get("plan", "")), interrupt_token=token)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return ev.Interrupt(kind="message", message=text, interrupt_token=token)


def resume_value(pending: Any, answer: ResumeAnswer) -> Any:
    """Translate the client's answer into the value ``interrupt()`` returns in the graph.

    Raises:
        ResumeInvalid: Wrong number of decisions, an unknown decision type, no answers, no verdict.
    """
    value = getattr(pending, "value", pending)
    if isinstance(value, dict) and value.get("action_requests"):
        requests = value["action_requests"]
        if len(answer.decisions) != len(requests):
            raise ResumeInvalid(
                "refusal.resume.decision_count",
                ["body", "decisions"],
                expected=len(requests),
                got=len(answer.decisions),
            )
        decisions: list[dict[str, Any]] = []
        for index, (request, decision) in enumerate(zip(requests, answer.decisions, strict=True)):
            at = ["body", "decisions", index]
            kind = decision.get("type")
            if kind == "approve":
                decisions.append({"type": "approve"})
            elif kind == "edit":
                args = decision.get("args")
                if not isinstance(args, dict):
                    raise ResumeInvalid("refusal.resume.edit_args", [*at, "args"])
                try:
                    # Plain JSON only: the value is checkpointed, and UI frameworks hand in proxy objects.
                    args = json.loads(json.dumps(args))
                except (TypeError, ValueError):
                    raise ResumeInvalid("refusal.resume.edit_json", [*at, "args"]) from None
                decisions.append(
                    {"type": "edit", "edited_action": {"name": request.get("name"), "args": args}}
                )
            elif kind == "reject":
                decisions.append({"type": "reject", "message": str(decision.get("message") or REJECT_REASON)})
            else:
                raise ResumeInvalid("refusal.resume.decision_type", [*at, "type"])
        return {"decisions": decisions}
    if isinstance(value, dict) and value.get("type") == "ask_user":
        answers = [str(text) for text in list(answer.answers)]
        if not answers or not any(text.strip() for text in answers):
            raise ResumeInvalid("refusal.resume.answers", ["body", "answers"])
        return {"answers": answers}
    if isinstance(value, dict) and value.get("type") == "plan":
        if answer.approved is None:
            raise ResumeInvalid("refusal.resume.plan_verdict", ["body", "approved"])
        return {"approved": bool(answer.approved), "feedback": str(answer.feedback)}
    return {"answers": answer.answers, "approved": answer.approved, "feedback": answer.feedback}


def remembered(pending: Any, answer: ResumeAnswer) -> list[tuple[str, str]]:
    """The approval rules an answer asks for: ``[(tool, scope)]``, scope ``session`` or ``always``.

    Raises:
        ResumeInvalid: ``remember`` on a reject, on something other than a tool approval, with an
            unknown scope, or for a tool that must be approved every time.
    """
    asks = [index for index, decision in enumerate(answer.decisions) if decision.get("remember")]
    if not asks:
        return []
    value = getattr(pending, "value", pending)
    if not (isinstance(value, dict) and value.get("action_requests")):
        raise ResumeInvalid(
            "refusal.resume.remember_not_approval", ["body", "decisions", asks[0], "remember"]
        )
    rules: list[tuple[str, str]] = []
    for index, (request, decision) in enumerate(
        zip(value["action_requests"], answer.decisions, strict=False)
    ):
        scope = decision.get("remember")
        if not scope:
            continue
        at = ["body", "decisions", index, "remember"]
        tool = str(request.get("name") or "")
        if decision.get("type") not in ("approve", "edit"):
            raise ResumeInvalid("refusal.resume.remember_reject", at)
        if scope not in ("session", "always"):
            raise ResumeInvalid("refusal.resume.remember_scope", at)
        if not is_rememberable(tool):
            raise ResumeInvalid("refusal.resume.remember_tool", at, tool=tool)
        rules.append((tool, scope))
    return rules
