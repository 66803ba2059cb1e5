"""The scripted model's brain: the FIFO queue and the rule-based default (reply types: ``replies.py``).

Everything here is pure (no HTTP), so the rules can be unit-tested and the server
in ``server.py`` only has to render a :data:`Reply` as OpenAI JSON or SSE.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from tests.scripted_llm.named_call import named_tool_call
from tests.scripted_llm.network_demo import network_call, summarise_network
from tests.scripted_llm.replies import (
    ErrorReply,
    Reply,
    TextReply,
    ToolCallSpec,
    ToolCallsReply,
    as_reply,
)
from tests.scripted_llm.tokens import message_text
from ventapp.agent.tool_failure_words import failure_for_person
from ventapp.i18n import t
from ventapp.tools.registry import failure_reason

MODEL_NAME = "scripted-demo"

_EXPRESSION_RUN = re.compile(r"[0-9+\-*/().^ %]+")
# "how" and "what is" are common words, so they only count as whole words; otherwise
# "show me" would turn every greeting into a knowledge search.
_SEARCH_TRIGGERS = (
    re.compile(r"search", re.IGNORECASE),
    re.compile(r"knowledge", re.IGNORECASE),
    re.compile(r"\bwhat is\b", re.IGNORECASE),
    re.compile(r"\bhow\b", re.IGNORECASE),
)
# Chinese requests: "计算" asks for the calculator; these for the knowledge base.
_ZH_SEARCH_TRIGGERS = tuple(re.compile(word) for word in ("搜索", "知识库", "什么是", "如何", "怎么", "怎样"))
# "plan" / "计划" asks for a plan: the model writes it as a todo list (write_todos), then answers.
_PLAN_TRIGGER = re.compile(r"\bplan\b|计划", re.IGNORECASE)
PLAN_TODOS = {
    "en": (
        ("Collect the airway data", "completed"),
        ("Calculate the required airflow", "in_progress"),
        ("Check the air velocities", "pending"),
    ),
    "zh-CN": (("收集巷道数据", "completed"), ("计算需风量", "in_progress"), ("校核风速", "pending")),
}
"""The todo list the plan rule writes, ``(content, status)`` per step, in each UI language."""
# The browser UI tells the model its language (ventapp.agent.middleware.LANGUAGE_NOTES).
_UI_LANG = re.compile(r"Interface language: [^\n(]*\((zh-CN|en)\)")
_LONG_ANSWER_VOCABULARY = (
    "Ventilation systems move fresh air through a building while removing stale air, "
    "heat, moisture and pollutants so that occupants stay healthy and comfortable"
).split()

MARKDOWN_ANSWER = """# Ventilation overview

Key points:

- Supply air brings fresh outdoor air in.
- Exhaust air removes stale indoor air.
- Heat recovery saves energy.

| Room | Air changes per hour |
| --- | --- |
| Office | 4 |
| Kitchen | 10 |

```python
def airflow(volume_m3: float, ach: float) -> float:
    return volume_m3 * ach
```
"""


def extract_expression(text: str) -> str:
    """Find the arithmetic expression in a user request.

    Args:
        text: e.g. ``"please calculate (12+8)*3"``.

    Returns:
        The longest run of ``0-9+-*/().^ %`` containing a digit, stripped (``"(12+8)*3"``),
        or ``""`` if there is none.
    """
    runs = [run.strip() for run in _EXPRESSION_RUN.findall(text) if any(ch.isdigit() for ch in run)]
    return max(runs, key=len, default="")


def _tool_names(body: Mapping[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        function = tool.get("function") or {}
        if function.get("name"):
            names.add(function["name"])
    return names


def _tool_name_for(messages: list[Mapping[str, Any]], tool_call_id: str) -> str:
    # Chat Completions tool messages carry no tool name, so recover it from the
    # assistant turn that issued the call.
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call.get("id") == tool_call_id:
                return (call.get("function") or {}).get("name", "")
    return ""


def ui_language(messages: Iterable[Mapping[str, Any]]) -> str:
    """The browser UI's language named in the system prompt: ``"zh-CN"``, or ``"en"`` (also when none is named).

    Args:
        messages: OpenAI-format messages of the request.
    """
    for message in messages:
        if message.get("role") in {"system", "developer"}:
            found = _UI_LANG.search(message_text(message))
            if found:
                return found.group(1)
    return "en"


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def answer_language(messages: Iterable[Mapping[str, Any]]) -> str:
    """The language of the demo's own sentences: the UI's (:func:`ui_language`) when the system prompt
    names one, else the user's own (``"zh-CN"`` when their latest message has Chinese characters).

    The legacy API sends no language note (a real model follows the user's words), so a Chinese
    API client would otherwise get English around Chinese tool results.

    Args:
        messages: OpenAI-format messages of the request.
    """
    messages = list(messages)
    if any(m.get("role") in {"system", "developer"} and _UI_LANG.search(message_text(m)) for m in messages):
        return ui_language(messages)
    said = next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
    return "zh-CN" if _CJK.search(said) else "en"


_REJECTIONS = tuple(
    sentence
    for lang in ("zh-CN", "en")
    for sentence in (
        t("approval.reject_with_reason", lang, reason=""),
        t("approval.reject_default_reason", lang),
    )
)
"""How a rejected call's result begins (the API's and the UI's sentence in either language)."""


def _summarise_calculate(content: str, lang: str = "en") -> str:
    # A rejected call has no result: a model passes the person's rejection on, not "结果是 …".
    if content.startswith(_REJECTIONS):
        return content.strip()
    # An approval edit prefixes the result with a note for the model; a model reads past it.
    content = content.rsplit("Tool response:\n", 1)[-1]
    if failure_reason(content) != content.strip():  # the registry's failure wrapper: not a result
        reason = failure_for_person(content, lang).rstrip("。.")
        return f"计算失败：{reason}。" if lang == "zh-CN" else f"The calculation failed: {reason}."
    value: Any = content.strip()
    try:
        parsed = json.loads(content)
    except ValueError:
        parsed = None
    if isinstance(parsed, Mapping):
        if "error" in parsed:
            return (
                f"计算失败：{parsed['error']}。"
                if lang == "zh-CN"
                else f"The calculation failed: {parsed['error']}."
            )
        for key in ("result", "value", "answer"):
            if key in parsed:
                value = parsed[key]
                break
    elif isinstance(parsed, int | float) and not isinstance(parsed, bool):
        value = parsed
    if not isinstance(value, str):
        value = json.dumps(value)
    # A rejection's reason is already a sentence: end it once, not twice ("…原因。。").
    if lang == "zh-CN":
        return f"结果是 {value}" + ("" if value.endswith(("。", "！", "？", ".")) else "。")
    return f"The result is {value}" + ("" if value.endswith((".", "!", "?", "。")) else ".")


def _summarise_knowledge(content: str, lang: str = "en") -> str | None:
    try:
        parsed = json.loads(content)
    except ValueError:
        return None
    if not isinstance(parsed, Mapping) or "sources" not in parsed:
        return None
    sources = parsed.get("sources") or []
    if not sources:
        if lang == "zh-CN":
            return "知识库中没有找到与这个问题相关的来源。"
        return "The knowledge base returned no sources for this question."
    first = sources[0]
    if isinstance(first, Mapping):
        title = first.get("title") or first.get("name") or first.get("source") or "untitled"
    else:
        title = first
    # Only the best hit matters for a short answer; ventapp's knowledge_search gives
    # data items {"title", "excerpt", ...} and sources {"title", "url", "snippet"}.
    data = parsed.get("data")
    best = data[0] if isinstance(data, list) and data else data
    if isinstance(best, Mapping):
        best = best.get("excerpt") or best.get("text") or best.get("snippet") or ""
    if not best and isinstance(first, Mapping):
        best = first.get("snippet") or ""
    snippet = " ".join(str(best or "").split())[:150]
    if lang == "zh-CN":
        return f"根据知识库（来源：{title}），{snippet or '已有相关内容。'}（共找到 {len(sources)} 个来源。）"
    gist = snippet or "the topic is covered."
    return f"According to the knowledge base (source: {title}), {gist} ({len(sources)} source(s) found.)"


def _summarise_tool_result(name: str, content: str, lang: str = "en") -> str:
    if name == "write_todos":
        steps = len(PLAN_TODOS[lang if lang in PLAN_TODOS else "en"])
        return (
            f"计划已写成 {steps} 步的任务清单。"
            if lang == "zh-CN"
            else f"The plan is a todo list of {steps} steps."
        )
    if name == "calculate":
        return _summarise_calculate(content, lang)
    if name == "solve_ventilation_network" and (solved := summarise_network(content, lang)) is not None:
        return solved
    if name == "knowledge_search":
        summary = _summarise_knowledge(content, lang)
        if summary is not None:
            return summary
    return f"完成：{content[:200]}" if lang == "zh-CN" else f"Done: {content[:200]}"


def _is_summarisation_request(body: Mapping[str, Any], messages: list[Mapping[str, Any]]) -> bool:
    if body.get("tools") or not messages:
        return False
    candidates = [messages[0], *(m for m in messages if m.get("role") in {"system", "developer"})]
    for message in candidates:
        text = message_text(message).lower()
        if "summar" in text or "context extraction" in text:
            return True
    return False


def long_answer(words: int = 200) -> str:
    """Return the deterministic long answer.

    Args:
        words: Number of words.

    Returns:
        ``words`` words cycling through a fixed ventilation sentence, ending with ``"."``.
    """
    vocab = _LONG_ANSWER_VOCABULARY
    return " ".join(vocab[i % len(vocab)] for i in range(words)) + "."


def _tool_or_unavailable(
    body: Mapping[str, Any], name: str, arguments: dict[str, Any], lang: str = "en"
) -> Reply:
    if name in _tool_names(body):
        return ToolCallsReply(calls=(ToolCallSpec(name=name, arguments=arguments),))
    if lang == "zh-CN":
        return TextReply(content=f"抱歉，本次对话中没有 {name} 这个工具。")
    return TextReply(content=f"Sorry, the tool {name} is not available in this conversation.")


def _search_query(text: str, trigger: re.Pattern[str]) -> str:
    query = " ".join(trigger.sub(" ", text, count=1).split()).strip(" ?.!:,")
    return query or text.strip()


THINKING_TEXT = "The user asked something; let me think it through step by step before answering."
"""Reasoning the rules add when the request asks for thinking (see :func:`thinking_requested`)."""


def thinking_requested(body: Mapping[str, Any]) -> bool:
    """Does the request switch reasoning on (``reasoning_effort`` other than ``none``, or
    ``enable_thinking`` true at the top or in ``chat_template_kwargs``)?"""
    effort = body.get("reasoning_effort")
    template = body.get("chat_template_kwargs") or {}
    return bool(
        (effort and effort != "none")
        or body.get("enable_thinking") is True
        or (isinstance(template, Mapping) and template.get("enable_thinking") is True)
    )


def rule_reply(body: Mapping[str, Any]) -> Reply:
    """The rule-based reply (:func:`_rule_reply`), with reasoning when the request asks for thinking."""
    reply = _rule_reply(body)
    if thinking_requested(body) and isinstance(reply, TextReply | ToolCallsReply) and not reply.reasoning:
        return dataclasses.replace(reply, reasoning=THINKING_TEXT)
    return reply


def _rule_reply(body: Mapping[str, Any]) -> Reply:
    """Decide the default reply for a chat request (used when the queue is empty).

    The decision looks at the last message:

    * summarisation call (no ``tools``; first or system message mentions "summar" or
      "context extraction") → a short text summary;
    * ``tool`` → a text summary of the trailing tool result(s): ``calculate`` gives
      "The result is <value>.", ``knowledge_search`` names the first source's title,
      anything else "Done: <first 200 chars>";
    * otherwise the last user message's text, checked in this order (case-insensitive):
      "error please" → HTTP 500; "long answer" → 200 words; "markdown" → a Markdown
      document; an offered ``<server>__<tool>`` name (an MCP server's tool) → that tool, with the
      JSON object after the name as arguments; the word "plan" / "计划" → ``write_todos`` with
      :data:`PLAN_TODOS` (then, after its result, "The plan is a todo list of 3 steps.");
      "calculate" / "计算" → ``calculate(expression=...)``; "search" / "knowledge" /
      "what is" / "how" / "搜索" / "知识库" / "什么是" / "如何" / "怎么" / "怎样" →
      ``knowledge_search(query=..., limit=3)``; else a greeting echoing the first 80
      characters. Tool calls fall back to an apology text when the tool is not in the
      request's ``tools``.

    Texts are in Chinese when the system prompt names the UI language ``zh-CN``
    ("Interface language: … (zh-CN)"), in English when it names ``en``, and with no such note (the
    legacy API) in the user's own language (:func:`answer_language`).

    Args:
        body: The parsed ``/v1/chat/completions`` request body (``messages``, ``tools``, ...).

    Returns:
        The reply to render.
    """
    messages = list(body.get("messages") or [])
    lang = answer_language(messages)
    if _is_summarisation_request(body, messages):
        chars = sum(len(message_text(m)) for m in messages)
        return TextReply(
            content=f"Summary: the user is working on a ventilation task; {chars} characters of earlier conversation were condensed."
        )

    if messages and messages[-1].get("role") == "tool":
        trailing = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            trailing.append(message)
        # Parallel tool calls leave several results; answer about all of them in order.
        parts = [
            _summarise_tool_result(_tool_name_for(messages, m.get("tool_call_id", "")), message_text(m), lang)
            for m in reversed(trailing)
        ]
        return TextReply(content=" ".join(parts))

    user_text = next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
    lowered = user_text.lower()
    if "error please" in lowered:
        return ErrorReply(status=500, message="Scripted server error (you asked for one).")
    if "long answer" in lowered:
        return TextReply(content=long_answer())
    if "markdown" in lowered:
        return TextReply(content=MARKDOWN_ANSWER)
    if named := named_tool_call(user_text, _tool_names(body)):
        return ToolCallsReply(calls=(ToolCallSpec(name=named[0], arguments=named[1]),))
    if (solve := network_call(user_text)) is not None:
        return _tool_or_unavailable(body, "solve_ventilation_network", solve, lang)
    if _PLAN_TRIGGER.search(user_text):
        todos = [{"content": c, "status": st} for c, st in PLAN_TODOS[lang if lang in PLAN_TODOS else "en"]]
        return _tool_or_unavailable(body, "write_todos", {"todos": todos}, lang)
    if "calculate" in lowered or "计算" in user_text:
        expression = extract_expression(user_text) or _search_query(
            user_text, re.compile("calculate|计算", re.IGNORECASE)
        )
        return _tool_or_unavailable(body, "calculate", {"expression": expression}, lang)
    for trigger in (*_SEARCH_TRIGGERS, *_ZH_SEARCH_TRIGGERS):
        if trigger.search(user_text):
            return _tool_or_unavailable(
                body, "knowledge_search", {"query": _search_query(user_text, trigger), "limit": 3}, lang
            )
    said = echo(user_text[:80])
    if lang == "zh-CN":
        return TextReply(content=f"你好！我是脚本演示模型。你说：{said}")
    return TextReply(content=f"Hello! I am the scripted demo model. You said: {said}")


def echo(text: str) -> str:
    """The user's text as Markdown that shows its line breaks (the chat renders answers as Markdown).

    A lone newline is a soft break in Markdown (shown as a space), so each one that ends a line
    of text becomes a hard break (two spaces before it); blank lines stay paragraph breaks, and a
    one-line message comes back unchanged.
    """
    return re.sub(r"(?<=\S)[ \t\r]*\n(?=[^\r\n])", "  \n", text)


class Script:
    """A FIFO queue of canned replies in front of :func:`rule_reply`.

    Thread-safe, because tests push from their own thread while uvicorn serves
    from another.

    Args:
        responses: Replies (or ``/_script``-style dicts) to queue up front.
    """

    def __init__(self, responses: Iterable[Reply | Mapping[str, Any]] = ()) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self.push(*responses)

    def push(self, *responses: Reply | Mapping[str, Any]) -> int:
        """Queue replies at the end of the FIFO.

        Args:
            *responses: :data:`Reply` objects or dicts accepted by :func:`~tests.scripted_llm.replies.reply_from_dict`.

        Returns:
            The queue length afterwards.
        """
        parsed = [as_reply(item) for item in responses]
        with self._lock:
            self._queue.extend(parsed)
            return len(self._queue)

    def clear(self) -> None:
        """Drop all queued replies."""
        with self._lock:
            self._queue.clear()

    @property
    def pending(self) -> int:
        """Number of queued replies not yet consumed."""
        with self._lock:
            return len(self._queue)

    def next_reply(self, body: Mapping[str, Any]) -> Reply:
        """Pop the oldest queued reply, or apply the rules when the queue is empty.

        Args:
            body: The chat request body.

        Returns:
            The reply for this request.
        """
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return rule_reply(body)
