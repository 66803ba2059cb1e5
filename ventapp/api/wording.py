"""The language of an API request, and the sentences the API words in it (approval reasons,
status lines, a run's closing error).

The API has no UI language: a request states one with ``Accept-Language`` (the first English
or Chinese language it lists; none, or no header, reads as ``zh-CN``, the spec's default).
An ``interrupt`` frame's approval ``reason`` is worded in it, in one language, wherever the
frame goes out (``POST /api/chat``, ``/api/chat/resume``, ``GET /api/chat/stream`` and
``GET /api/chat/interrupt``); ``reason_code`` stays beside it for clients that word it themselves.
Each ``agent_start``, ``agent_done`` and ``agent_error`` gets ``label``, the agent's name in it
(``cn_agent`` stays Chinese); each ``tool_call`` and ``tool_result`` gets ``label``, the tool's
display name in it (``cn_tool`` stays Chinese); a failed ``tool_result`` also gets ``message``, its
reason as a person reads it in it (``content`` stays what the model read). So are the run's opening ``thinking`` line, each ``executing`` line (Chinese as the kernel
words it, English from the catalogue), and an ``error`` frame whose sentence is fixed by its
failure (no model configured, model server unreachable or cut off mid-answer, stopped, timed
out, quota, storage, internal); ``code`` never changes. An error that quotes the model server
(``model_failed``, ``model_error`` …, ``context_overflow``) keeps its English sentence: it names
settings and the provider's own words, for whoever runs the server.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header

from ventapp.agent import events as ev
from ventapp.agent.chat_run import THINKING_MESSAGE
from ventapp.agent.errors import failure_wording
from ventapp.agent.interrupts import REASON_DEFAULT, REASON_NEEDS_APPROVAL
from ventapp.agent.kernel import MAIN_AGENT, label_for
from ventapp.agent.subagent_tracker import subagent_label
from ventapp.agent.tool_failure_words import failure_for_person
from ventapp.i18n import LANGS, accept_language, t

_WORDED_CODES = (REASON_NEEDS_APPROVAL, REASON_DEFAULT)
"""Reasons we word (ours, and the framework's generic English one); a reason of its own stays as written."""


async def request_lang(
    accept: Annotated[
        str | None,
        Header(
            alias="Accept-Language",
            description="The language of sentences the answer carries (approval reasons, a run's "
            "fixed errors, the words of figures its tools draw): the first English or Chinese one "
            "listed; default zh-CN",
        ),
    ] = None,
) -> str:
    """``"zh-CN"`` or ``"en"`` from the request's ``Accept-Language`` (see :func:`~ventapp.i18n.accept_language`)."""
    return accept_language(accept)


RequestLang = Annotated[str, Depends(request_lang)]


def _worded_request(request: dict[str, Any], lang: str) -> dict[str, Any]:
    tool = str(request.get("tool") or "")
    # The display name, so a client without our catalogue titles the card in its own language.
    labelled = {**request, "label": label_for(tool, lang)}
    if request.get("reason_code") not in _WORDED_CODES:
        return labelled
    return {**labelled, "reason": t("approval.reason_needs_approval", lang, tool=labelled["label"])}


def worded(event: ev.ContractEvent, lang: str) -> ev.ContractEvent:
    """``event`` with its approval reasons in ``lang`` (any other event, or a reason of its own, as is).

    Args:
        event: A contract event; only an ``interrupt`` with ``tool_approval`` changes.
        lang: ``"zh-CN"`` or ``"en"``.

    Returns:
        A copy whose ``tool_approval`` and each of its ``requests[]`` carry ``label``, the tool's
        display name in ``lang`` (``"计算器"`` / ``"Calculator"``), and whose ``reason`` with a ``reason_code``
        of ``needs_approval`` or ``default`` reads e.g. ``"计算器需要你批准后才会运行。"`` /
        ``"Calculator needs your approval before it runs."``; an ``error`` of a fixed failure or a model
        failure quoting the server (:func:`~ventapp.agent.errors.failure_wording`), an agent's ``label`` (``agent_start``, ``agent_done``,
        ``agent_error``: ``"Ventilation agent"``), a tool's ``label`` (``tool_call``, ``tool_result``:
        ``"Calculator"``; ``cn_tool`` stays Chinese), a failed ``tool_result``'s ``message``
        (:func:`~ventapp.agent.tool_failure_words.failure_for_person`, ``""`` for a result that did not fail), the opening ``thinking`` line and an ``executing`` line
        (``"Calling Calculator…"``; ``cn_tools`` stays Chinese) in ``lang``; the same object otherwise.
    """
    if isinstance(event, _AGENT_EVENTS):
        return event.model_copy(update={"label": agent_label(event.agent, lang)})
    if isinstance(event, ev.ToolResult):
        message = failure_message(event.content, event.error, lang)
        return event.model_copy(update={"label": label_for(event.tool, lang), "message": message})
    if isinstance(event, _TOOL_EVENTS):
        return event.model_copy(update={"label": label_for(event.tool, lang)})
    if isinstance(event, ev.Error | ev.Thinking):
        message = _fixed_message(event, lang)
        return event.model_copy(update={"message": message}) if message is not None else event
    if isinstance(event, ev.Executing):  # the kernel words it in Chinese (the legacy contract's language)
        if lang == "en":
            tools = ", ".join(dict.fromkeys(label_for(name, lang) for name in event.tools))
            return event.model_copy(update={"message": t("live.calling", lang, tools=tools)})
        return event
    if not isinstance(event, ev.Interrupt) or not event.tool_approval:
        return event
    approval = _worded_request(event.tool_approval, lang)
    requests = approval.get("requests")
    if isinstance(requests, list):
        approval = {**approval, "requests": [_worded_request(dict(r), lang) for r in requests]}
    return event.model_copy(update={"tool_approval": approval})


_AGENT_EVENTS = (ev.AgentStart, ev.AgentDone, ev.AgentError)
"""Events that name an agent: the API adds its name in the request's language (``label``)."""

_TOOL_EVENTS = (ev.ToolCall, ev.ToolResult)
"""Events that name a tool: the API adds its display name in the request's language (``label``)."""


def failure_message(content: Any, error: Any, lang: str) -> str:
    """A tool call's ``message`` in ``lang``: its failure as a person reads it, ``""`` when it did not fail.

    Args:
        content: The tool message's text as the model read it, e.g. ``"Tool 'calculate' failed:
            [bad_expression] 这个算式无法计算… (division by zero in '1/0')"`` (None while it runs).
        error: Whether the call failed (a ``tool_result``'s ``error``, a stored call's ``error``).
        lang: ``"zh-CN"`` or ``"en"``.

    Returns:
        :func:`~ventapp.agent.tool_failure_words.failure_for_person` of ``content`` for a failed call
        (the same sentence the Reflex tool card shows); ``""`` otherwise.
    """
    return failure_for_person(str(content), lang) if error and content is not None else ""


def agent_label(agent: str, lang: str) -> str:
    """The display name of the main agent (``"通风智能体"`` / ``"Ventilation agent"``) or a sub-agent type in ``lang``."""
    return t("agent.main", lang) if agent == MAIN_AGENT else subagent_label(agent, lang)


def _fixed_message(event: ev.Error | ev.Thinking, lang: str) -> str | None:
    """The fixed sentence of ``event`` in ``lang`` when that differs from what it says; else None."""
    if isinstance(event, ev.Error):
        wording = failure_wording(event.code, event.message)
    else:
        wording = ("live.thinking", {}) if event.message == THINKING_MESSAGE else None
    if wording is None:
        return None
    key, fields = wording
    message = t(key, lang, **fields)
    return message if message != event.message else None


def needs_wording(event: ev.ContractEvent, lang: str | None = None) -> bool:
    """Whether :func:`worded` changes ``event`` in ``lang`` (its encoded frame then differs from the shared one).

    Args:
        event: A contract event.
        lang: ``"zh-CN"`` or ``"en"``; None asks whether it changes in any language.

    Returns:
        False for a frame that reads the same in ``lang`` as it was made (a Chinese ``executing``
        or opening ``thinking`` line for a Chinese request, a fixed error's English sentence for
        an English one), so every follower of the run shares its bytes encoded once.
    """
    if lang is None:
        return any(needs_wording(event, each) for each in LANGS)
    if isinstance(event, ev.Error | ev.Thinking):
        return _fixed_message(event, lang) is not None
    if isinstance(event, ev.Executing):
        return lang == "en"
    if isinstance(event, _AGENT_EVENTS + _TOOL_EVENTS):
        return True  # label, in every language
    return isinstance(event, ev.Interrupt) and bool(event.tool_approval)  # labels in every language
