"""A calculation tool's refusal of bad input, worded for the person and for the model.

A tool refuses as ``[code] sentence (detail)``, as the network solver does: the sentence is the
catalogue's ``tool.refused.<code>`` (:mod:`ventapp.i18n.zh_cn_tools`) in the run's language, for the
person's tool card (:func:`ventapp.agent.tool_failure_words.failure_for_person` keeps only it); the detail
is English, for the model, and names the argument to fix.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ventapp.i18n import t
from ventapp.tools.run_language import run_language

F = TypeVar("F", bound=Callable[..., Any])


def refusal_text(code: str, sentence: str, detail: object) -> str:
    """A tool's refusal as the model and the tool card read it: ``[code] sentence (detail)``.

    ``sentence`` is the person's (catalogue, their language; the values in it as the person wrote
    them), ``detail`` the English for the model; :func:`ventapp.agent.tool_failure_words.failure_for_person`
    takes the three apart again (the detail is the parenthesised group that ends the text).
    """
    return f"[{code}] {sentence} ({detail})"


class Refused(ValueError):
    """Bad input, worded for the person (``tool.refused.<code>``) and for the model (``detail``).

    Args:
        code: The catalogue's ``tool.refused.<code>``, e.g. ``"no_duty"``.
        detail: English for the model, naming the argument to fix; may hold parentheses.
        **fields: The sentence's placeholders, e.g. ``name="tunnel"``, shown as given.
    """

    def __init__(self, code: str, detail: str, **fields: object) -> None:
        sentence = t(f"tool.refused.{code}", run_language(), **fields)
        super().__init__(refusal_text(code, sentence, detail))


def refusing(func: F) -> F:
    """``func`` with any other bad-input error (from the domain, from units) refused as ``bad_input``.

    A tool decorated with it (under ``@register``) never shows a person the domain's English alone.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Refused:
            raise
        except (ValueError, ArithmeticError) as exc:
            raise Refused("bad_input", str(exc).rstrip(".") or type(exc).__name__) from exc

    return wrapper  # type: ignore[return-value]
