"""The built-in demo tools: current time, a safe calculator and knowledge search.

Each function is registered with :func:`ventapp.tools.registry.register`; its
docstring is what the model reads, so it is written for the model.
"""

from __future__ import annotations

import ast
import math
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from simpleeval import InvalidExpression, NameNotDefined, SimpleEval

from ventapp.tools import knowledge
from ventapp.tools.refused import Refused
from ventapp.tools.registry import register, source, sourced
from ventapp.tools.run_language import run_language

LOCAL_TZ_NAME = "Asia/Shanghai"
MAX_EXPRESSION_CHARS = 500
MAX_RESULT_MAGNITUDE = 1e300
SEARCH_LIMIT_MAX = 10


def _now() -> datetime:
    """Current UTC time; a seam so tests can freeze the clock."""
    return datetime.now(UTC)


def _local_tz() -> timezone | ZoneInfo:
    try:
        return ZoneInfo(LOCAL_TZ_NAME)
    except ZoneInfoNotFoundError:
        # Without a tz database (slim images), fall back to the offset: China has had no DST since 1991.
        return timezone(timedelta(hours=8), LOCAL_TZ_NAME)


@register(
    group="通用",
    label="当前时间",
    label_en="Current time",
    summary="Current date and time in Beijing (Asia/Shanghai) and UTC.",
)
def current_time() -> str:
    """Get the current date and time.

    Use this whenever the answer depends on today's date or the time of day.

    Returns:
        Two lines with ISO 8601 timestamps including the UTC offset, for
        Asia/Shanghai (China Standard Time, UTC+08:00) and for UTC.
    """
    now = _now().astimezone(UTC).replace(microsecond=0)
    local = now.astimezone(_local_tz())
    return f"{LOCAL_TZ_NAME}: {local.isoformat()} ({local:%A})\nUTC: {now.isoformat()}"


# --- calculator -----------------------------------------------------------------------------


def _round(value: float, ndigits: int | None = None) -> float | int:
    # round(5, -10**9) would build 10**(10**9); real calculations never need more than 15 digits.
    if ndigits is None:
        return round(value)
    if not isinstance(ndigits, int) or isinstance(ndigits, bool) or abs(ndigits) > 15:
        raise ValueError("round() takes a whole number of digits between -15 and 15")
    return round(value, ndigits)


_FUNCTIONS = {
    "sqrt": math.sqrt,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "abs": abs,
    "round": _round,
    "min": min,
    "max": max,
}
_NAMES = {"pi": math.pi, "e": math.e}


def _check_number(value: object) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"only real numbers are supported, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("the result is not a finite number")
    if abs(value) > MAX_RESULT_MAGNITUDE:
        raise ValueError(f"the result is larger than {MAX_RESULT_MAGNITUDE:g}")
    return value


def _safe_pow(base: float | int, exponent: float | int) -> float | int:
    # Python computes huge integer powers exactly (9**9**9 would run for minutes), so the
    # size of the result is estimated from logarithms before computing anything.
    if base == 0 and exponent < 0:
        raise ValueError("zero cannot be raised to a negative power (division by zero)")
    if base != 0 and exponent != 0:
        # log10 of |result|; positive means growth, and only growth can blow up.
        magnitude = exponent * math.log10(abs(base))
        if magnitude > math.log10(MAX_RESULT_MAGNITUDE):
            raise ValueError(f"the power {base}**{exponent} is too large (limit {MAX_RESULT_MAGNITUDE:g})")
    result = base**exponent
    if isinstance(result, complex):
        raise ValueError("a negative number raised to a fractional power is not a real number")
    return result


_OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: _safe_pow,
    ast.USub: lambda a: -a,
    ast.UAdd: lambda a: +a,
}
_ALLOWED_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.Constant,
    *_OPERATORS,
)


def _validate(tree: ast.Expression) -> None:
    # Checked before evaluation (simpleeval is the second line of defence) so the
    # message names exactly what is not allowed.
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            raise ValueError("attribute access (a '.' after a name) is not allowed")
        if not isinstance(node, _ALLOWED_NODES):
            raise ValueError(
                f"'{type(node).__name__}' is not allowed; use numbers, + - * / // % ** and functions"
            )
        if isinstance(node, ast.Constant) and (
            isinstance(node.value, bool) or not isinstance(node.value, int | float)
        ):
            raise ValueError(f"only numbers are allowed as literals, got {node.value!r}")
        if isinstance(node, ast.Call) and (
            not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords
        ):
            name = node.func.id if isinstance(node.func, ast.Name) else "?"
            raise ValueError(
                f"unknown function '{name}' (allowed: {', '.join(_FUNCTIONS)}; positional arguments only)"
            )


def _format_number(value: float | int) -> str:
    if value == 0:
        return "0"  # avoids "-0"
    if isinstance(value, int) and abs(value) < 10**15:
        return str(value)
    return f"{value:.10g}"


_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
"""Full-width forms (``（`` ``）`` ``１`` ``＋`` …) -> the ASCII characters they stand for (Unicode's
Halfwidth and Fullwidth Forms block, https://www.unicode.org/charts/PDF/UFF00.pdf)."""


def evaluate(expression: str) -> str:
    """Evaluate an arithmetic expression safely and format the result.

    Args:
        expression: E.g. "(12+8)*3" or "2^10" ("^" means power).

    Returns:
        The formatted result: integers without ".0", floats to 10 significant digits.

    Raises:
        ValueError: On syntax errors, unknown names or functions, attribute access,
            non-numeric values, or results beyond 1e300.
        ZeroDivisionError: On division by zero.
    """
    text = (expression or "").strip()
    if not text:
        raise ValueError("the expression is empty")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    # A Chinese input method types full-width brackets, digits and operators (（12+8）×３): the
    # ASCII they stand for (U+FF01–U+FF5E are U+0021–U+007E shifted; not NFKC, which would make
    # "3²" into "32"). Users and models write ^ for power; Python's ^ is XOR with the wrong precedence.
    text = text.translate(_FULL_WIDTH).replace("\u3000", " ")
    text = text.replace("^", "**").replace("×", "*").replace("÷", "/")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"'{expression}' is not a valid arithmetic expression ({exc.msg})") from None
    _validate(tree)
    evaluator = SimpleEval(operators=dict(_OPERATORS), functions=dict(_FUNCTIONS), names=dict(_NAMES))
    try:
        value = evaluator.eval(text, previously_parsed=tree.body)
    except NameNotDefined as exc:
        raise ValueError(
            f"unknown name '{exc.name}' (allowed constants: pi, e; functions: {', '.join(_FUNCTIONS)})"
        ) from None
    except ZeroDivisionError:
        raise ZeroDivisionError(f"division by zero in '{expression}'") from None
    except OverflowError:
        raise ValueError(f"the result of '{expression}' is too large") from None
    except InvalidExpression as exc:
        raise ValueError(str(exc)) from None
    return _format_number(_check_number(value))


@register(
    group="计算",
    label="计算器",
    label_en="Calculator",
    summary="Safe arithmetic calculator (no code execution).",
)
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression exactly, instead of doing arithmetic in your head.

    Supports numbers, + - * / // % ** ("^" also means power), parentheses, unary
    minus, the constants pi and e, and the functions sqrt, sin, cos, tan (radians),
    log (natural; log(x, base) for another base), log10, exp, abs, round, min, max.
    Variables, attribute access, strings and code are not allowed. Use one
    expression per call and keep units in your own reasoning, e.g. airflow
    Q = v*A: "0.25*12.5" gives m³/s for v in m/s and A in m².

    Args:
        expression: The arithmetic expression, e.g. "(12+8)*3" or "100*2.5*1.5/60".

    Returns:
        The result as text: integers without ".0", other values with up to
        10 significant digits (e.g. "60", "0.3333333333", "1.2e+15").
    """
    try:
        return evaluate(expression)
    except (ValueError, ArithmeticError) as exc:
        # The person's card says it in their language; the model reads what to fix in English.
        raise Refused("bad_expression", str(exc)) from exc


# --- knowledge search -----------------------------------------------------------------------


@register(
    group="知识库",
    label="知识检索",
    label_en="Knowledge search",
    summary="Search the ventilation-engineering knowledge base.",
)
def knowledge_search(query: str, limit: int = 5) -> dict:
    """Search the built-in ventilation-engineering knowledge base and cite what you use.

    Covers mine air requirements, gas limits (methane/瓦斯, CO, CO2, H2S, NO2, O2),
    airway resistance (Atkinson's square law), fan laws, fan operating points and
    series/parallel fans, natural ventilation pressure, auxiliary ventilation of
    headings, air velocity limits, tunnel ventilation (jet fans) and dust control.
    Queries may be English or Chinese keywords. Titles and excerpts come in the language of the
    run (Chinese for a Chinese user). Cite results by their title and url.

    Args:
        query: Keywords, e.g. "methane limit return air" or "风速 限制".
        limit: Maximum number of documents to return, 1 to 10.

    Returns:
        JSON {"data": [{"title", "doc_id", "excerpt", "score"}], "sources":
        [{"title", "url", "snippet", "score"}]} ranked by BM25 score, best first;
        both lists are empty (with a "note") when nothing matches.
    """
    # Both language sets are searched; titles and excerpts come in the run's language
    # (run_language(): the UI's, zh-CN for API and scheduled runs), at the same /kb/<doc_id> URL.
    limit = max(1, min(SEARCH_LIMIT_MAX, int(limit)))
    if not (query or "").strip():
        return sourced([], [], note="The query was empty; pass a few keywords.")
    hits = knowledge.search(query, limit, lang=run_language())
    if not hits:
        return sourced(
            [], [], note=f"No knowledge-base document matched {query!r}; try other or fewer keywords."
        )
    data = [
        {"title": h.doc.title, "doc_id": h.doc.doc_id, "excerpt": h.excerpt, "score": round(h.score, 4)}
        for h in hits
    ]
    sources = [source(h.doc.title, h.doc.url, snippet=h.excerpt, score=round(h.score, 4)) for h in hits]
    return sourced(data, sources)
