"""The card a paused run shows in its answer bubble, and the answer built from its inputs.

A run that pauses ends with an ``interrupt`` event (:class:`ventapp.agent.events.Interrupt`).
:func:`interrupt_view` turns it into an :class:`InterruptView` the page renders as a card:

* ``tool_approval`` — every call of the batch with its arguments; per call the person
  approves (default), edits the arguments (JSON) or rejects with a reason;
* ``ask_user`` — one input per question;
* ``plan`` — the plan (Markdown), approved or sent back with feedback.

The card's inputs come back as a form (``args_<i>``, ``reason_<i>``, ``remember_<i>``,
``answer_<i>``, ``feedback``); :func:`approval_answer`, :func:`questions_answer` and :func:`plan_answer`
check them and build the :class:`~ventapp.agent.interrupts.ResumeAnswer` for
:func:`ventapp.agent.resume.start_resume`, or return the card with a readable error.
Everything here is pure Python (no Reflex, no I/O).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ventapp.agent import events as ev
from ventapp.agent.interrupts import REASON_DEFAULT, REASON_NEEDS_APPROVAL, ResumeAnswer, rejection_message
from ventapp.i18n import DEFAULT_LANG, t
from ventapp.state.views import ToolCardView, args_to_json, tool_label
from ventapp.tools.registry import is_rememberable

CARD_KINDS = frozenset({"tool_approval", "ask_user", "plan"})
"""Interrupt kinds the chat answers with a card (``message`` is only shown as a note)."""

APPROVE, EDIT, REJECT = "approve", "edit", "reject"
CALL_MODES = (APPROVE, EDIT, REJECT)

REMEMBER_SCOPES = ("session", "always")
"""An approval's ``remember`` as the API takes it; the card's default (``""``) asks again next time."""

FormData = Mapping[str, Any]


@dataclass
class ApprovalCallView:
    """One tool call of an approval batch, as the card shows it.

    Attributes:
        index: Position in the batch (decisions go back in this order).
        tool: Tool name, e.g. ``calculate`` (shown small, beside the label).
        label: The tool's display name in the card's language, e.g. ``计算器`` (the card's heading).
        args_json: The proposed arguments, pretty-printed JSON.
        reason: Why the call needs approval (may be empty).
        mode: ``approve`` | ``edit`` | ``reject`` — what the person chose for this call.
        edit_text: The arguments as last submitted in the edit box (starts as ``args_json``).
        reject_reason: The reason as last submitted.
        error: What is wrong with this call's input (e.g. invalid JSON); empty when fine.
        tool_call_id: The call's card in the answer (marked with the decision once sent).
        rememberable: Whether an approval of this call may be remembered (the tool's
            ``rememberable``): only then does the card offer "don't ask again".
        remember: The "don't ask again" chosen with the approval as last submitted:
            ``""`` (just this once), ``session`` or ``always``.
    """

    index: int = 0
    tool: str = ""
    label: str = ""
    args_json: str = "{}"
    reason: str = ""
    mode: str = APPROVE
    edit_text: str = ""
    reject_reason: str = ""
    error: str = ""
    tool_call_id: str = ""
    rememberable: bool = False
    remember: str = ""


@dataclass
class InterruptView:
    """The card of the pause the open session waits on; ``kind == ""`` means none.

    Attributes:
        kind: ``tool_approval`` | ``ask_user`` | ``plan`` | ``""``.
        token: The ``interrupt_token`` to send back with the answer.
        calls: The approval batch, in order (tool approvals only).
        questions: The questions (``ask_user`` only).
        plan: The plan as Markdown (``plan`` only).
        submit_label: The approval button's text, e.g. ``"Approve"``, ``"Approve 3"``.
        submit_icon: Its icon (lucide name): ``check`` to approve, ``ban`` when every call is
            rejected, ``send`` for a mix or an edit.
        error: A sentence about the whole card (an invalid answer, a refused resume).
        submitting: True from the click until the resumed run is admitted or refused.
        lang: The UI language the card's server-worded texts (button, errors) are in.
    """

    kind: str = ""
    token: str = ""
    calls: list[ApprovalCallView] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    plan: str = ""
    submit_label: str = ""
    submit_icon: str = "check"
    error: str = ""
    submitting: bool = False
    lang: str = DEFAULT_LANG


def _shown_reason(request: Mapping[str, Any], lang: str) -> str:
    """The reason in ``lang`` by its ``reason_code`` (the English ``reason`` is for the legacy API);
    deepagents' generic reason says nothing the card does not; a reason of its own is shown as written."""
    code = str(request.get("reason_code") or "")
    if code == REASON_NEEDS_APPROVAL:
        return t(
            "approval.reason_needs_approval", lang, tool=tool_label(str(request.get("tool") or ""), "", lang)
        )
    return "" if code == REASON_DEFAULT else str(request.get("reason") or "").strip()


def submit_icon(calls: list[ApprovalCallView]) -> str:
    """The approval button's icon: ``check`` (all approved), ``ban`` (all rejected), else ``send``."""
    modes = {call.mode for call in calls}
    if modes <= {APPROVE}:
        return "check"
    return "ban" if modes == {REJECT} else "send"


def submit_label(calls: list[ApprovalCallView], lang: str = DEFAULT_LANG) -> str:
    """The approval button: ``"Approve"``, ``"Approve 3"``, or the mix, e.g. ``"Send: 2 approve · 1 reject"``."""
    counts = Counter(call.mode for call in calls)
    if counts[EDIT] == counts[REJECT] == 0:
        return (
            t("approval.approve", lang)
            if len(calls) <= 1
            else t("approval.approve_n", lang, count=len(calls))
        )
    if len(calls) == 1:
        return t("approval.run_edited", lang) if counts[EDIT] else t("approval.reject_one", lang)
    parts = " · ".join(
        t(f"approval.mix_{mode}", lang, count=counts[mode]) for mode in CALL_MODES if counts[mode]
    )
    return t("approval.send_mix", lang, parts=parts)


def interrupt_view(event: ev.Interrupt | None, lang: str = DEFAULT_LANG) -> InterruptView:
    """The card for an ``interrupt`` event; an empty view when there is none or no card fits.

    Args:
        event: The event the stream ended with (or ``pending_interrupt``'s answer).
        lang: The UI language of the card's button and errors.

    Returns:
        ``kind`` empty for None, kind ``message``, or an event without ``interrupt_token``.
    """
    if event is None or event.kind not in CARD_KINDS or not event.interrupt_token:
        return InterruptView()
    if event.kind == "tool_approval":
        approval = event.tool_approval or {}
        requests = approval.get("requests") or [approval]
        calls = []
        call_ids = [*event.tool_call_ids, *[""] * len(requests)]
        for index, request in enumerate(requests):
            args = args_to_json(request.get("args") or {})
            calls.append(
                ApprovalCallView(
                    index=index,
                    tool=str(request.get("tool") or ""),
                    label=tool_label(str(request.get("tool") or ""), "", lang),
                    args_json=args,
                    reason=_shown_reason(request, lang),
                    edit_text=args,
                    tool_call_id=call_ids[index],
                    rememberable=is_rememberable(str(request.get("tool") or "")),
                )
            )
        return InterruptView(
            kind="tool_approval",
            token=event.interrupt_token,
            calls=calls,
            submit_label=submit_label(calls, lang),
            submit_icon=submit_icon(calls),
            lang=lang,
        )
    if event.kind == "ask_user":
        questions = [str(q) for q in (event.ask_user or {}).get("questions", []) if str(q).strip()]
        return InterruptView(kind="ask_user", token=event.interrupt_token, questions=questions, lang=lang)
    return InterruptView(kind="plan", token=event.interrupt_token, plan=event.message or "", lang=lang)


def with_mode(view: InterruptView, index: int, mode: str) -> InterruptView:
    """Toggle one call between ``mode`` (edit or reject) and approve; clears the errors."""
    if mode not in CALL_MODES:
        return view
    return _with_calls(
        view,
        [
            dataclasses.replace(call, mode=APPROVE if call.mode == mode else mode, error="")
            if call.index == index
            else call
            for call in view.calls
        ],
    )


def _with_calls(view: InterruptView, calls: list[Any]) -> InterruptView:
    """``view`` with these calls, its send button labelled and iconed for them, and no error."""
    return dataclasses.replace(
        view,
        calls=calls,
        submit_label=submit_label(calls, view.lang),
        submit_icon=submit_icon(calls),
        error="",
    )


def parse_args(text: str, lang: str = DEFAULT_LANG) -> tuple[dict[str, Any] | None, str]:
    """Edited arguments: ``(object, "")`` or ``(None, sentence saying what to fix, in lang)``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, t("approval.bad_json", lang, line=exc.lineno, column=exc.colno)
    if not isinstance(value, dict):
        return None, t("approval.not_object", lang)
    return value, ""


def _remember(call: ApprovalCallView, form: FormData) -> str:
    """The call's ``remember_<i>``: a scope only for an approved call whose tool may be remembered
    (the card offers it only then; an edit or a reject is asked about again, as in the card)."""
    scope = str(form.get(f"remember_{call.index}", call.remember) or "")
    return scope if call.mode == APPROVE and call.rememberable and scope in REMEMBER_SCOPES else ""


def approval_answer(view: InterruptView, form: FormData) -> tuple[ResumeAnswer | None, InterruptView]:
    """One decision per call, in order, from the card's form (``args_<i>``, ``reason_<i>``,
    ``remember_<i>``).

    An approved call with ``remember_<i>`` ``session`` / ``always`` carries it as the API's
    ``"remember"`` (per call, like ``POST /api/chat/resume``): the resume stores the rule the same
    way (:func:`ventapp.agent.resume.start_resume`), so later calls of that tool run without a card.

    Returns:
        ``(answer, view)`` with the typed inputs kept in ``view``; ``answer`` is None when
        an edited call's JSON is invalid (the call's ``error`` says why).
    """
    decisions: list[dict[str, Any]] = []
    calls: list[ApprovalCallView] = []
    for call in view.calls:
        edit_text = str(form.get(f"args_{call.index}", call.edit_text))
        reject_reason = str(form.get(f"reason_{call.index}", call.reject_reason)).strip()
        remember = _remember(call, form)
        error = ""
        if call.mode == EDIT:
            args, error = parse_args(edit_text, view.lang)
            decisions.append({"type": EDIT, "args": args})
        elif call.mode == REJECT:
            # The model reads that the person rejected the call, with their reason, in the card's
            # language (the bare reason read as the tool's output; not the framework's English).
            decisions.append({"type": REJECT, "message": rejection_message(reject_reason, view.lang)})
        else:
            decisions.append({"type": APPROVE, "remember": remember} if remember else {"type": APPROVE})
        calls.append(
            dataclasses.replace(
                call, edit_text=edit_text, reject_reason=reject_reason, remember=remember, error=error
            )
        )
    view = dataclasses.replace(view, calls=calls, error="")
    if any(call.error for call in calls):
        return None, dataclasses.replace(view, error=t("approval.fix_marked", view.lang))
    return ResumeAnswer(decisions=decisions), view


def questions_answer(view: InterruptView, form: FormData) -> tuple[ResumeAnswer | None, InterruptView]:
    """One answer per question from ``answer_<i>``; at least one must be filled in."""
    answers = [str(form.get(f"answer_{index}") or "").strip() for index in range(len(view.questions))]
    if not any(answers):
        return None, dataclasses.replace(view, error=t("ask.none", view.lang))
    return ResumeAnswer(answers=answers), dataclasses.replace(view, error="")


def plan_answer(
    view: InterruptView, approved: bool, feedback: str = ""
) -> tuple[ResumeAnswer | None, InterruptView]:
    """Approve the plan, or send it back; sending back needs feedback."""
    feedback = feedback.strip()
    if not approved and not feedback:
        return None, dataclasses.replace(view, error=t("plan.needs_feedback", view.lang))
    return ResumeAnswer(approved=approved, feedback=feedback), dataclasses.replace(view, error="")


REVIEW_WORDS = {APPROVE: "approved", EDIT: "edited", REJECT: "rejected"}


def reviewed(cards: list[ToolCardView], view: InterruptView, answer: ResumeAnswer) -> list[ToolCardView]:
    """The answer's tool cards marked with the person's decisions, as the stored answer will have them.

    Args:
        cards: The live answer's cards.
        view: The approval card that was answered (its calls name their cards).
        answer: The decisions sent, one per call in order.
    """
    marks: dict[str, tuple[str, str]] = {}
    for call, decision in zip(view.calls, answer.decisions, strict=False):
        kind = str(decision.get("type") or "")
        if call.tool_call_id and kind in REVIEW_WORDS:
            marks[call.tool_call_id] = (REVIEW_WORDS[kind], call.args_json if kind == EDIT else "")
    return [
        dataclasses.replace(
            card, review=marks[card.tool_call_id][0], old_args_json=marks[card.tool_call_id][1]
        )
        if card.tool_call_id in marks
        else card
        for card in cards
    ]


def unreviewed(cards: list[ToolCardView], view: InterruptView) -> list[ToolCardView]:
    """The cards of ``view``'s calls without the decision :func:`reviewed` marked: the resume was
    refused (quota, out of date), so nothing was decided and they still wait (tester, 2 Dec: "已由你批准"
    beside "等待你处理")."""
    ids = {call.tool_call_id for call in view.calls if call.tool_call_id}
    return [
        dataclasses.replace(card, review="", old_args_json="") if card.tool_call_id in ids else card
        for card in cards
    ]


def reject_all(view: InterruptView) -> InterruptView:
    """Every call of the batch switched to reject (the reasons typed so far are kept)."""
    return _with_calls(view, [dataclasses.replace(call, mode=REJECT, error="") for call in view.calls])
