"""The single source of truth for VentAgent's tools.

Every tool the agent can call is a plain, type-hinted Python function with a
Google-style docstring, decorated with :func:`register`. The decorator turns it
into a LangChain :class:`~langchain_core.tools.StructuredTool` (the docstring
becomes what the model sees, its ``Args:`` section the per-argument
descriptions) and records a :class:`ToolSpec` with the UI metadata (group,
label, summary, whether a human must approve the call).

Contract for every registered tool:

* It never raises out of the tool. Any exception becomes a
  :class:`~langchain_core.tools.ToolException` with a readable sentence, and the
  tool is built with ``handle_tool_error=True``, so LangGraph's ``ToolNode``
  returns a ``ToolMessage`` with ``status="error"`` and that sentence instead of
  crashing the run.
* A ``dict``/``list`` result is sent to the model as JSON (``ensure_ascii=False``
  so Chinese stays readable); a ``str`` is passed through unchanged.
* Results that cite documents use :func:`sourced`, i.e.
  ``{"data": ..., "sources": [{"title", "url", "snippet", "score"}, ...]}``;
  the UI recovers the citations with :func:`parse_sourced`.

Tool modules are listed in :data:`_BUILTIN_MODULES` and loaded with
:func:`load_builtin_tools`.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.tools import BaseTool, StructuredTool, ToolException

try:  # LangGraph control-flow signals (interrupt(), Command) must reach the graph untouched.
    from langgraph.errors import GraphBubbleUp as _PassThrough
except ImportError:  # pragma: no cover - langgraph is a runtime dependency
    _PassThrough = ()  # type: ignore[assignment]

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

_BUILTIN_MODULES: tuple[str, ...] = (
    "ventapp.tools.demo_tools",
    "ventapp.tools.interaction_tools",
    "ventapp.tools.ventilation_tools",
    "ventapp.tools.network_tool",
)

# OpenAI-compatible function names; other providers accept a superset.
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool and the metadata the UI and the agent need.

    Attributes:
        name: Tool name as the model calls it (the function name).
        group: UI group heading, e.g. "计算".
        label: Short human-readable label shown on tool cards, e.g. "计算器" (Chinese, the default UI language).
        label_en: The same label in English, e.g. "Calculator" (the UI's second language).
        summary: One-line description for tool pickers (the model sees the docstring instead).
        requires_approval: True when a human must approve each call before it runs.
        tool: The LangChain tool handed to the agent.
        module: Dotted name of the module that registered the tool.
        rememberable: False when a person must approve every call, never "don't ask again"
            (a real side effect each time); approval rules are refused for such a tool.
    """

    name: str
    group: str
    label: str
    summary: str
    requires_approval: bool
    tool: BaseTool
    module: str
    rememberable: bool = True
    label_en: str = ""


# Errors a tool raises on purpose for bad input: logged without a traceback.
_EXPECTED_ERRORS = (ToolException, ValueError, ArithmeticError, LookupError)

_REGISTRY: dict[str, ToolSpec] = {}
_LOCK = threading.RLock()


def _readable_reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__


def _to_content(result: Any) -> str:
    if isinstance(result, str):
        return result
    # default=str keeps dates/paths readable instead of failing a successful call.
    return json.dumps(result, ensure_ascii=False, default=str)


_FAILED = re.compile(r"^Tool '[^'\n]*' failed: ")
"""The wrapper :func:`_wrap` puts around a failure's reason: it tells the model which tool failed."""


def failure_reason(content: str) -> str:
    """A tool message's text without the model-facing ``Tool '<name>' failed: `` wrapper.

    Args:
        content: A tool message's text, e.g. ``"Tool 'x' failed: [empty] 文件为空。"``.

    Returns:
        The reason alone (``"[empty] 文件为空。"``), or ``content`` unchanged when it has no wrapper.
    """
    return _FAILED.sub("", content.strip(), count=1)


def _wrap(func: Callable[..., Any], name: str) -> Callable[..., str]:
    """Return ``func`` with failures turned into ToolException and results into text."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            result = func(*args, **kwargs)
        except _PassThrough:
            raise
        except Exception as exc:
            reason = _readable_reason(exc).rstrip(".")
            # Bad input is routine (the model gets the sentence and retries); anything else is
            # a bug and keeps its traceback for operators.
            if isinstance(exc, _EXPECTED_ERRORS):
                logger.info("Tool %s refused: %s", name, reason)
            else:
                logger.warning("Tool %s failed", name, exc_info=True)
            raise ToolException(f"Tool '{name}' failed: {reason}.") from exc
        try:
            return _to_content(result)
        except (TypeError, ValueError) as exc:
            raise ToolException(
                f"Tool '{name}' failed: its result could not be encoded as JSON ({exc})."
            ) from exc

    return wrapper


def _validation_message(name: str) -> Callable[[Exception], str]:
    def handle(exc: Exception) -> str:
        errors = getattr(exc, "errors", None)
        if callable(errors):
            parts = []
            for err in errors():
                loc = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
                parts.append(f"{loc}: {err.get('msg', 'invalid value')}")
            detail = "; ".join(parts)
        else:
            detail = _readable_reason(exc)
        return f"Tool '{name}' got invalid arguments: {detail}."

    return handle


def register(
    *,
    group: str,
    label: str,
    summary: str,
    label_en: str = "",
    requires_approval: bool = False,
    rememberable: bool = True,
) -> Callable[[F], F]:
    """Register a plain function as an agent tool.

    The function's name is the tool name and its Google-style docstring is the
    description the model sees (``Args:`` entries become argument descriptions).
    The function itself is returned unchanged, so it stays directly callable and
    testable; the wrapped tool lives in the registry.

    Args:
        group: UI group heading for the tool, e.g. "通用".
        label: Short UI label in Chinese, e.g. "当前时间".
        label_en: The label in English, e.g. "Current time" (the tool name when empty).
        summary: One-line description for tool pickers.
        requires_approval: Whether a human must approve every call.
        rememberable: Whether a person may answer an approval with "don't ask again" (approval
            rules); False for a tool whose every call has a real side effect worth a look.

    Returns:
        A decorator that registers the function and returns it unchanged.

    Raises:
        ValueError: At decoration time, when the name is already registered (the message
            names both modules), the name is not a valid tool name, metadata is empty,
            or the docstring is missing or malformed.
    """
    for field_name, value in (("group", group), ("label", label), ("summary", summary)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"register(): '{field_name}' must be a non-empty string")

    def decorator(func: F) -> F:
        name = func.__name__
        module = func.__module__
        if not _NAME_RE.match(name):
            raise ValueError(f"Tool name {name!r} in {module} must match {_NAME_RE.pattern}")
        if not (func.__doc__ or "").strip():
            raise ValueError(
                f"Tool {name!r} in {module} has no docstring; the docstring is what the model sees"
            )
        with _LOCK:
            existing = _REGISTRY.get(name)
            if existing is not None:
                raise ValueError(
                    f"Duplicate tool name {name!r}: registered by {existing.module} "
                    f"and again by {module}. Tool names must be unique."
                )
            try:
                tool = StructuredTool.from_function(
                    func=_wrap(func, name),
                    name=name,
                    parse_docstring=True,
                    # A docstring that does not describe every argument fails at start, not at call time.
                    error_on_invalid_docstring=True,
                    handle_tool_error=True,
                    handle_validation_error=_validation_message(name),
                    metadata={"group": group, "label": label, "requires_approval": requires_approval},
                )
            except ValueError as exc:
                raise ValueError(f"Tool {name!r} in {module}: invalid docstring or signature: {exc}") from exc
            _REGISTRY[name] = ToolSpec(
                name=name,
                group=group,
                label=label,
                summary=summary,
                requires_approval=requires_approval,
                tool=tool,
                module=module,
                rememberable=rememberable,
                label_en=label_en.strip(),
            )
        return func

    return decorator


def source(title: str, url: str, snippet: str = "", score: float | None = None) -> dict:
    """Build one citation entry for a :func:`sourced` result.

    Args:
        title: Human-readable document title (non-empty).
        url: Stable link to the document, e.g. "/kb/fan-laws" (non-empty).
        snippet: The passage that supports the answer.
        score: Retrieval relevance score (higher is better), or None.

    Returns:
        ``{"title": str, "url": str, "snippet": str, "score": float | None}``.

    Raises:
        ValueError: If ``title`` or ``url`` is empty.
    """
    if not str(title).strip() or not str(url).strip():
        raise ValueError("a source needs a non-empty title and url")
    return {
        "title": str(title),
        "url": str(url),
        "snippet": str(snippet or ""),
        "score": None if score is None else float(score),
    }


def sourced(data: Any, sources: list[dict], *, note: str | None = None) -> dict:
    """Wrap a tool result with its citations, the structured citation format.

    Args:
        data: The JSON-serialisable payload for the model.
        sources: Entries built with :func:`source`.
        note: Optional explanation for the model, e.g. why the result is empty.

    Returns:
        ``{"data": data, "sources": [...]}`` plus ``"note"`` when given.
    """
    result: dict[str, Any] = {"data": data, "sources": list(sources)}
    if note:
        result["note"] = note
    return result


def _normalise_source(entry: Any) -> dict | None:
    if not isinstance(entry, dict):
        return None
    title, url = entry.get("title"), entry.get("url")
    if not isinstance(title, str) or not title.strip() or not isinstance(url, str) or not url.strip():
        return None
    snippet = entry.get("snippet")
    score = entry.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        score = None
    return {
        "title": title,
        "url": url,
        "snippet": snippet if isinstance(snippet, str) else "",
        "score": None if score is None else float(score),
    }


def parse_sourced(content: Any) -> list[dict]:
    """Extract the citations from a ToolMessage content.

    Args:
        content: The ``ToolMessage.content``: normally a string; a list of content
            blocks (``{"type": "text", "text": ...}``) is joined first.

    Returns:
        The valid sources, each ``{"title", "url", "snippet", "score"}`` with non-empty
        title and url (``snippet`` defaults to "", ``score`` to None); ``[]`` when the
        content is not sourced JSON. Never raises.
    """
    try:
        if isinstance(content, list):
            content = "".join(
                b if isinstance(b, str) else str(b.get("text", ""))
                for b in content
                if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
            )
        if not isinstance(content, str) or not content.lstrip().startswith("{"):
            return []
        payload = json.loads(content)
        if not isinstance(payload, dict) or "data" not in payload:
            return []
        raw = payload.get("sources")
        if not isinstance(raw, list):
            return []
        return [s for s in (_normalise_source(e) for e in raw) if s is not None]
    except Exception:  # the UI calls this on arbitrary tool output
        return []


def get_spec(name: str) -> ToolSpec | None:
    """Return the spec registered under ``name``, or None."""
    return _REGISTRY.get(name)


def all_specs() -> list[ToolSpec]:
    """Return every registered spec, in registration order."""
    with _LOCK:
        return list(_REGISTRY.values())


def all_tools() -> list[BaseTool]:
    """Return every registered tool, in registration order."""
    return [spec.tool for spec in all_specs()]


def get_tools_by_name(names: list[str]) -> list[BaseTool]:
    """Resolve tool names to the LangChain tools, preserving the given order.

    Args:
        names: Tool names, e.g. ``["calculate", "knowledge_search"]``.

    Returns:
        ``BaseTool`` instances (each with ``.name``), ready for an agent.

    Raises:
        KeyError: If a name is unknown; the message lists the known names.
    """
    with _LOCK:
        unknown = [n for n in names if n not in _REGISTRY]
        if unknown:
            known = ", ".join(sorted(_REGISTRY)) or "(none registered)"
            raise KeyError(f"Unknown tool name(s): {', '.join(unknown)}. Known tools: {known}")
        return [_REGISTRY[n].tool for n in names]


def tool_label(name: str, lang: str = "zh-CN") -> str:
    """Return the UI label of tool ``name`` in ``lang`` (``"zh-CN"`` | ``"en"``), or the name when unknown.

    An English label that was never given reads as the tool name.
    """
    spec = _REGISTRY.get(name)
    if spec is None:
        return name
    return (spec.label_en or name) if lang == "en" else spec.label


def is_rememberable(name: str) -> bool:
    """Whether calls of ``name`` may be approved once for all (unknown names: True)."""
    spec = get_spec(name)
    return spec is None or spec.rememberable


def approval_required() -> list[str]:
    """Return the names of the tools that need human approval before each call."""
    return [spec.name for spec in all_specs() if spec.requires_approval]


def add_specs(specs: list[ToolSpec]) -> None:
    """Register tools built elsewhere (an MCP server's), all or none.

    Args:
        specs: Specs with unique, valid names; ``module`` says where they come from (``mcp:<server>``).

    Raises:
        ValueError: A name is invalid, or already registered or given twice; the message names both sources.
    """
    with _LOCK:
        seen: dict[str, str] = {}
        for spec in specs:
            if not _NAME_RE.match(spec.name):
                raise ValueError(f"Tool name {spec.name!r} from {spec.module} must match {_NAME_RE.pattern}")
            other = _REGISTRY[spec.name].module if spec.name in _REGISTRY else seen.get(spec.name)
            if other is not None:
                raise ValueError(
                    f"Duplicate tool name {spec.name!r}: offered by {other} and again by {spec.module}. "
                    "Tool names must be unique."
                )
            seen[spec.name] = spec.module
        _REGISTRY.update({spec.name: spec for spec in specs})


def remove_specs(module_prefix: str) -> None:
    """Forget every tool whose ``module`` starts with ``module_prefix`` (e.g. ``"mcp:"``)."""
    with _LOCK:
        for name in [name for name, spec in _REGISTRY.items() if spec.module.startswith(module_prefix)]:
            del _REGISTRY[name]


def clear_registry() -> None:
    """Forget every registered tool (tests and reloads).

    Note that re-importing a tool module afterwards does nothing, because Python
    caches modules; use ``load_builtin_tools(reload=True)`` to get them back.
    """
    with _LOCK:
        _REGISTRY.clear()


def _has_tools_from(module_name: str) -> bool:
    return any(spec.module == module_name for spec in all_specs())


def load_builtin_tools(*, reload: bool = False) -> list[ToolSpec]:
    """Import the built-in tool modules so their tools register.

    ``importlib.import_module`` does not re-run the body of a module already in
    ``sys.modules``, so after :func:`clear_registry` a plain import would leave the
    registry empty. Therefore an already-imported module that has no tools in the
    registry is reloaded, and ``reload=True`` clears the registry and reloads every
    built-in module.

    Args:
        reload: Clear the registry and re-execute every built-in module.

    Returns:
        All registered specs after loading.

    Raises:
        ValueError: If two tools share a name (see :func:`register`).
        ImportError: If a built-in module cannot be imported.
    """
    if reload:
        clear_registry()
    for module_name in _BUILTIN_MODULES:
        module = sys.modules.get(module_name)
        if module is None:
            importlib.import_module(module_name)
        elif reload or not _has_tools_from(module_name):
            importlib.reload(module)
    return all_specs()
