"""What the chat page shows, as typed records, and how stored rows become them.

Reflex serialises dataclasses to plain JSON objects, so ``list[ChatMessageView]``
is a typed state var that ``rx.foreach`` can walk with attribute access
(``message.tools``). Everything here is pure Python: no Reflex, no I/O, so the
reducer in :mod:`ventapp.state.live_answer` and these helpers are unit-tested
without a browser.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from ventapp.agent import events as ev
from ventapp.agent.errors import RETRYABLE_CODES, failure_wording, server_stop_key
from ventapp.agent.kernel import label_for
from ventapp.agent.pipeline import CANCELLED_MARKER
from ventapp.agent.subagent_tracker import subagent_label
from ventapp.agent.tool_failure_words import failure_for_person
from ventapp.billing.guard import raisable_quota_words
from ventapp.i18n import DEFAULT_LANG, has_message, t
from ventapp.i18n import formats as fmt
from ventapp.state.tool_summary import tool_summary
from ventapp.state.usage_words import as_usage, usage_footer

STATUS_DONE = "done"
STATUS_ERROR = "error"
STATUS_STREAMING = "streaming"
STATUS_WAITING = "waiting"
STATUS_STOPPED = "stopped"
"""Stopped by the user (Stop button) or by a departed client: a quiet note, not an error."""
STATUS_DROPPED = "dropped"
"""A paused answer the person moved on from (a new message instead of an answer): a quiet note."""
SUPERSEDED_CODE = "superseded"  # execution_runs.error_code of such a run (chat_store)

DISPLAY_TZ = ZoneInfo("Asia/Shanghai")
"""Zone the UI shows times in (the usage day is that zone's calendar day)."""

_STORED_STATUS = {
    "complete": STATUS_DONE,
    "failed": STATUS_ERROR,
    "cancelled": STATUS_STOPPED,
    "waiting": STATUS_WAITING,
    "interrupted": STATUS_ERROR,
}
UNANSWERED_NOTICE = "live.unanswered"
"""Message id of the note on a paused answer nobody answered (a newer message moved the conversation on)."""

_STORED_FAILURE = {"failed": "live.failed_stored", "interrupted": "live.lost_stored"}
"""Message ids of the sentence a stored failed or lost answer shows."""


@dataclass
class ToolCardView:
    """One tool call shown as a card, keyed by ``tool_call_id`` (pitfall 12).

    Attributes:
        tool_call_id: The call id from the model; the card's DOM id is ``tool-<id>``.
        tool: Internal tool name, e.g. ``calculate``.
        cn_tool: Display label, e.g. ``计算器``.
        args_json: The arguments, pretty-printed JSON.
        content: The tool's result text; empty until the result arrives.
        error: True when the tool reported a failure.
        done: True once the result arrived.
        agent_id: ``main`` or the sub-agent that made the call.
        figures: ``/workspace/...`` images the result lists under ``data.figures`` (shown in
            the card through ``GET /api/sessions/{id}/files``).
        description: A sub-agent (``task``) card's task, as the main agent wrote it.
        parent: The ``task`` card this call belongs to (shown nested inside it); "" at the top.
        summary: One line of the result, shown while the result itself is collapsed.
        review: The person's decision on its approval card: approved | edited | rejected | "", or
            ``dropped`` when a new message was sent instead of an answer.
        old_args_json: The model's proposal when the person edited the arguments; "" otherwise.
        plan: A plan card's plan (Markdown), kept visible in the answer once answered.
    """

    tool_call_id: str = ""
    tool: str = ""
    cn_tool: str = ""
    args_json: str = "{}"
    content: str = ""
    error: bool = False
    done: bool = False
    agent_id: str = "main"
    figures: list[str] = field(default_factory=list)
    description: str = ""
    parent: str = ""
    summary: str = ""
    review: str = ""
    old_args_json: str = ""
    plan: str = ""


SUBAGENT_TOOL = "task"
TODO_TOOL = "write_todos"
PLAN_TOOL = "request_plan_approval"


def card_heading(tool: str, cn_tool: str, args: Any, lang: str = DEFAULT_LANG) -> tuple[str, str]:
    """A card's ``(label, description)``: a sub-agent card is named by its type and task, never its id."""
    if tool != SUBAGENT_TOOL:
        return tool_label(tool, cn_tool, lang), ""
    args = args if isinstance(args, Mapping) else {}
    kind = str(args.get("subagent_type") or "general-purpose")
    return subagent_label(kind, lang), " ".join(str(args.get("description") or "").split())


def plan_of(tool: str, args: Any) -> str:
    """The plan a ``request_plan_approval`` call submitted; "" for any other call."""
    if tool != PLAN_TOOL or not isinstance(args, Mapping):
        return ""
    return str(args.get("plan") or "")


def plan_verdict(tool: str, content: Any) -> str:
    """How the person answered a plan card: ``approved`` | ``sent_back`` (from the tool's result); "" else."""
    if tool != PLAN_TOOL or not isinstance(content, str):
        return ""
    return (
        "approved"
        if content.startswith("APPROVED")
        else "sent_back"
        if content.startswith("REJECTED")
        else ""
    )


def nested(cards: Iterable[ToolCardView]) -> list[ToolCardView]:
    """The cards with ``parent`` set: a call made by a sub-agent whose ``task`` card is listed sits inside it."""
    cards = list(cards)
    tasks = {card.tool_call_id for card in cards if card.tool == SUBAGENT_TOOL}
    out = []
    for card in cards:
        parent = card.agent_id if card.agent_id in tasks and card.agent_id != card.tool_call_id else ""
        out.append(card if card.parent == parent else dataclasses.replace(card, parent=parent))
    return out


def todos_of_cards(cards: Iterable[ToolCardView | Mapping[str, Any]]) -> list[TodoView]:
    """The todo list of the main agent's last ``write_todos`` call that took effect (a reloaded answer's panel).

    A refused call (two in one step: langchain answers both with an error) changed nothing live,
    so it changes nothing here either.
    """
    latest: Any = None
    for card in cards:
        raw = dataclasses.asdict(card) if isinstance(card, ToolCardView) else card
        if raw.get("error"):
            continue
        if raw.get("tool") == TODO_TOOL and str(raw.get("agent_id") or "main") == "main":
            latest = raw.get("args")
    if isinstance(latest, str):
        try:
            latest = json.loads(latest)
        except ValueError:
            latest = None
    todos = latest.get("todos") if isinstance(latest, Mapping) else None
    return todos_from(item for item in todos if isinstance(item, Mapping)) if isinstance(todos, list) else []


FIGURE_SUFFIXES = (".png", ".jpg", ".jpeg")


def figure_paths(content: Any) -> list[str]:
    """The ``/workspace/`` images a sourced tool result lists under ``data.figures`` (never raises)."""
    try:
        payload = (
            json.loads(content) if isinstance(content, str) and content.lstrip().startswith("{") else None
        )
        figures = payload.get("data", {}).get("figures") if isinstance(payload, dict) else None
    except (ValueError, AttributeError):
        return []
    if not isinstance(figures, list):
        return []
    return [
        f
        for f in figures
        if isinstance(f, str) and f.startswith("/workspace/") and f.lower().endswith(FIGURE_SUFFIXES)
    ]


@dataclass
class CitationView:
    """One tool-backed source listed under an answer (``url`` is often ``/kb/<doc_id>``)."""

    title: str = ""
    url: str = ""
    snippet: str = ""


@dataclass
class TodoView:
    """One item of the agent's todo list; ``status`` is pending | in_progress | completed."""

    content: str = ""
    status: str = "pending"


@dataclass
class ChatMessageView:
    """One bubble of the transcript.

    Attributes:
        id: Stable key (the stored message id, or a local one for fresh messages).
        role: ``user`` or ``assistant``.
        content: Markdown text.
        reasoning: The model's streamed reasoning, if the provider sends it.
        tools: Tool cards, in call order.
        todos: The todo list after the last ``write_todos``.
        citations: Sources, de-duplicated by URL.
        model_only: True when the answer had no tool-backed source at all.
        notice: A neutral note (the run paused for input, a sub-agent failed).
        error: A sentence for people when the run failed; empty otherwise.
        error_detail: What went wrong for the operator (the pipeline's own sentence, e.g. naming
            ``OPENAI_BASE_URL``), behind a "details" disclosure; empty when ``error`` says it all.
        usage_link: ``error`` is a quota the user lowered themselves: the callout links to ``/usage``.
        footer: Duration, token and cost line, e.g. ``1.2 s · 345 tokens (300 in · 45 out) · ¥0.0001``.
        status: ``done`` | ``error`` | ``waiting`` | ``stopped`` | ``dropped`` (``data-state`` of the bubble).
        context_tokens: Context occupancy after this answer (input of its last model call).
        context_limit: The model's context window; 0 when unknown.
        unsent: A user message the server refused before it ran (not stored): shown with Retry.
        retryable: A failed answer whose error code says sending again can help (``RETRYABLE_CODES``).
        attachments: A user message's attached files (``/workspace/uploads/<name>``), shown as chips.
    """

    id: str = ""
    role: str = "assistant"
    content: str = ""
    reasoning: str = ""
    tools: list[ToolCardView] = field(default_factory=list)
    todos: list[TodoView] = field(default_factory=list)
    citations: list[CitationView] = field(default_factory=list)
    model_only: bool = False
    notice: str = ""
    error: str = ""
    error_detail: str = ""
    usage_link: bool = False
    footer: str = ""
    status: str = STATUS_DONE
    context_tokens: int = 0
    context_limit: int = 0
    unsent: bool = False
    retryable: bool = False
    attachments: list[str] = field(default_factory=list)


@dataclass
class SessionView:
    """One past conversation in the sidebar (``pinned`` ones are listed first)."""

    id: str = ""
    title: str = ""
    updated: str = ""
    pinned: bool = False


def tool_label(tool: str, cn_tool: str, lang: str = DEFAULT_LANG) -> str:
    """A tool card's label in ``lang``: the registry's (or a built-in's); else, in Chinese, the event's
    ``cn_tool``; else the name (an English page never falls back to the Chinese label)."""
    label = label_for(tool, lang) if tool else ""
    if label and label != tool:
        return label
    return tool if lang == "en" and tool else cn_tool or tool


def worded_error(code: str, message: str, lang: str = DEFAULT_LANG) -> tuple[str, str]:
    """An error for the person at the keyboard, and the operator's detail.

    Args:
        code: The contract's error code (``model_unreachable``, ``quota`` …) or a refusal's code.
        message: The pipeline's sentence (English, may name settings such as ``OPENAI_BASE_URL``).
        lang: The UI language.

    Returns:
        ``(plain sentence in lang, detail)``; for a code without a plain sentence, or a ``bad_request``
        refusal's own sentence, ``(message, "")``;
        for a failure in :data:`_OWN_LINE`, ``(its own sentence in lang, "")``.
        A detail that is a run failure's sentence (``run_error.*``, a model server's reason quoted
        as it said it; as the API words it) is worded in ``lang`` too, e.g. ``"尚未配置模型。请在 .env 中设置 OPENAI_BASE_URL…"``.
    """
    if code == "quota" and (raisable := raisable_quota_words(message, lang)) is not None:
        return raisable  # the user lowered their own limit: the usage page raises it again
    key = f"error.{code}"
    if not code or not has_message(key) or (code == "bad_request" and message.strip()):
        return message, ""  # a refused message's own sentence (worded by the caller) says what to fix
    plain = t(key, lang)
    if message.strip() in ("", plain):
        return plain, ""
    wording = failure_wording(code, message.strip())
    if wording is None:  # a sentence of its own (a model server's words): the detail, as written
        return plain, message
    detail = t(wording[0], lang, **wording[1])
    if wording[0] in _OWN_LINE:
        return detail, ""  # the sentence is the line: no details block repeating it
    return plain, detail


_OWN_LINE = frozenset({"run_error.model_path_not_found", "run_error.model_path_not_found.reason"})
"""Failures whose own sentence is the one to act on (the base URL lacks its /v1): it is the bubble's
line, where the code's generic one ("模型服务在当前设置下拒绝工作。") would say nothing to fix."""


def stop_notice(code: str, message: str, lang: str = DEFAULT_LANG) -> str:
    """Why a stopped answer stopped when the server stopped it (it shut down), in ``lang``; else ``""``
    (the person's own Stop needs no more than the bubble's "Stopped" note)."""
    key = server_stop_key(code, message.strip())
    return t(key, lang) if key else ""


def args_to_json(args: Any) -> str:
    """Pretty-print tool arguments for a card (non-JSON values fall back to ``str``)."""
    try:
        return json.dumps(args, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(args)


def format_tool_output(content: str) -> str:
    """A tool result for reading: JSON objects and arrays pretty-printed, anything else as is."""
    stripped = content.strip()
    if not stripped.startswith(("{", "[")):
        return content
    try:
        return json.dumps(json.loads(stripped), ensure_ascii=False, indent=2)
    except ValueError:
        return content


def card_output(content: str, error: bool, lang: str = DEFAULT_LANG) -> str:
    """What a tool card's expanded result shows: a failure as a person reads it, else the output.

    The model got the whole text (the registry's ``Tool '<name>' failed:`` wrapper, a refusal's
    English detail); the card says the reason as :func:`failure_for_person` does in ``lang``,
    like its one-line summary, only not cut short. A success is :func:`format_tool_output`.
    """
    return failure_for_person(content, lang) if error else format_tool_output(content)


def tool_card_from_dict(raw: Mapping[str, Any], lang: str = DEFAULT_LANG) -> ToolCardView:
    """A stored tool card ``{tool_call_id, tool, cn_tool, args, content, error}`` as a view (label in ``lang``)."""
    content = raw.get("content")
    tool = str(raw.get("tool") or "")
    args = raw.get("args") or {}
    label, description = card_heading(tool, str(raw.get("cn_tool") or ""), args, lang)
    original = raw.get("original_args")
    return ToolCardView(
        tool_call_id=str(raw.get("tool_call_id") or ""),
        tool=tool,
        cn_tool=label,
        args_json=args_to_json(args),
        content="" if content is None else card_output(str(content), bool(raw.get("error")), lang),
        error=bool(raw.get("error")),
        done=content is not None,
        agent_id=str(raw.get("agent_id") or "main"),
        figures=[] if raw.get("error") else figure_paths(content),
        description=description,
        summary="" if content is None else tool_summary(str(content), lang, tool),
        review=str(raw.get("review") or "") or plan_verdict(tool, content),
        old_args_json=args_to_json(original) if isinstance(original, Mapping) else "",
        plan=plan_of(tool, args),
    )


def citation_from(raw: ev.Citation | Mapping[str, Any]) -> CitationView:
    """A contract citation (or its stored dict) as a view."""
    if isinstance(raw, ev.Citation):
        return CitationView(title=raw.title, url=raw.url, snippet=raw.snippet)
    return CitationView(
        title=str(raw.get("title") or raw.get("url") or ""),
        url=str(raw.get("url") or ""),
        snippet=str(raw.get("snippet") or ""),
    )


def todos_from(items: Iterable[Mapping[str, Any]]) -> list[TodoView]:
    """``write_todos`` items ``{content, status}`` as views (unknown statuses read as pending)."""
    out = []
    for item in items:
        status = str(item.get("status") or "pending")
        if status not in ("pending", "in_progress", "completed"):
            status = "pending"
        out.append(TodoView(content=str(item.get("content") or ""), status=status))
    return out


def shown_text(content: str, status: str) -> str:
    """An answer's text as the UI shows it: a stopped one without the stored ``[stopped]`` marker.

    The pipeline appends the marker (``CANCELLED_MARKER``) for the legacy API; the UI shows its
    "Stopped" note instead.
    """
    if status == STATUS_STOPPED:
        return content.removesuffix(CANCELLED_MARKER).removesuffix(CANCELLED_MARKER.strip())
    return content


def as_dropped(message: ChatMessageView, lang: str = DEFAULT_LANG) -> ChatMessageView:
    """A paused answer the person moved on from: a neutral note, its unanswered calls marked ``dropped``.

    The same live (the tab that sent the new message) and after a reload (a stored answer of a run
    closed as ``superseded``): never the red "Failed", never a "Waiting for you" badge.
    """
    tools = [
        card if card.done else dataclasses.replace(card, review=STATUS_DROPPED) for card in message.tools
    ]
    notice = t("live.dropped", lang)
    return dataclasses.replace(
        message, status=STATUS_DROPPED, notice=notice, error="", error_detail="", tools=tools
    )


def message_from_row(row: Any, lang: str = DEFAULT_LANG, run: Any = None) -> ChatMessageView:
    """A stored ``ChatMessage`` row (``ventapp.db.models``) as a transcript bubble, worded in ``lang``.

    Args:
        row: The message.
        lang: The UI language.
        run: Its ``ExecutionRun`` when known: the footer gets the run's duration and a failed answer
            the run's own reason (quota, timeout, model …), as it read live; without it a failed
            answer gets a generic sentence.
    """
    role = "user" if row.role == "user" else "assistant"
    if role == "user":
        return ChatMessageView(id=str(row.id), role="user", content=row.content or "")
    stored = str(row.status or "complete")
    status = _STORED_STATUS.get(stored, STATUS_DONE)
    citations = [citation_from(c) for c in row.citations or []]
    usage = as_usage(row.usage or None)
    error = t(_STORED_FAILURE[stored], lang) if stored in _STORED_FAILURE else ""
    detail = ""
    code = str(getattr(run, "error_code", None) or "")
    if error and code:
        error, detail = worded_error(code, str(run.error or ""), lang)
    notice = t(UNANSWERED_NOTICE, lang) if stored == "waiting" else ""
    if stored == "cancelled" and run is not None:
        notice = stop_notice(code, str(run.error or ""), lang)
    duration = getattr(run, "duration_ms", None) if stored != "waiting" else None
    view = ChatMessageView(
        id=str(row.id),
        role="assistant",
        content=shown_text(row.content or "", status),
        reasoning=str(getattr(row, "reasoning", None) or ""),
        tools=nested(tool_card_from_dict(card, lang) for card in row.tool_calls or []),
        todos=todos_of_cards(row.tool_calls or []),
        citations=citations,
        model_only=stored == "complete" and not citations,
        notice=notice,
        error=error,
        error_detail=detail,
        footer=usage_footer(usage, duration, lang),
        status=status,
        context_tokens=usage.context_tokens if usage else 0,
        context_limit=usage.context_limit if usage else 0,
        retryable=bool(error) and code in RETRYABLE_CODES,
    )
    if stored == "cancelled" and getattr(run, "error_code", None) == SUPERSEDED_CODE:
        return as_dropped(view, lang)
    return view


_STORED_WHEN = re.compile(r" · (\d{4}-\d\d-\d\d \d\d:\d\d)$")
"""The fire time a scheduled run's session title ends with (``scheduler.execution.session_title``)."""


def shown_title(title: str) -> str:
    """A session title as the sidebar shows it: a scheduled run's ``"<name> · 2026-12-02 13:36"``
    (stored so, and so in the API) reads ``"<name>"``, since the line under it gives the date (tester
    #13, 2 Dec: the title was cut off mid-date and the same date printed again underneath). Other
    titles are unchanged."""
    match = _STORED_WHEN.search(title)
    return title if match is None or match.start() == 0 else title[: match.start()]


def session_from_row(row: Any, lang: str = DEFAULT_LANG) -> SessionView:
    """A stored ``ChatSession`` row as a sidebar entry (``updated`` to the minute, Beijing time, in ``lang``).

    Stored times are UTC; the sidebar shows them in Asia/Shanghai like the usage page, whose
    day boundary is that zone's midnight.
    """
    return SessionView(
        id=str(row.id),
        title=shown_title(row.title) if row.title else t("sidebar.new_title", lang),
        updated=fmt.date_time(row.updated_at, lang, DISPLAY_TZ),
        pinned=bool(getattr(row, "pinned", False)),
    )


def sent_turns(messages: list[ChatMessageView]) -> list[ChatMessageView]:
    """The user messages the server stored, in order (a refused one never was)."""
    return [m for m in messages if m.role == "user" and not m.unsent]
