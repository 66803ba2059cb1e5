"""Reading a sentence made from a ``str.format`` template back into its values.

Some English sentences are stored or sent as they are (a schedule run's ``error``, a tool's failure
the model reads) and worded again for a person in another language: the template that made the
sentence gives back the values to word it with.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache


@lru_cache(maxsize=256)
def template_pattern(
    template: str, *, stop: str = "", value: str = ".+?", values: tuple[tuple[str, str], ...] = ()
) -> re.Pattern[str]:
    r"""A regex matching a whole sentence made from ``template``; its placeholders are named groups.

    Args:
        template: E.g. ``"{path} does not exist"``; a placeholder's format spec is ignored.
        stop: Optional characters that may end the sentence besides the template's own text
            (e.g. ``"."`` for a sentence a wrapper closed with a full stop).
        value: What a placeholder's value matches (a regex; lazily, across lines too, by default).
        values: ``(placeholder, regex)`` pairs for placeholders whose values have a shape of their
            own, e.g. ``(("status", r"\d{3}"),)`` for an HTTP status.

    Returns:
        A compiled pattern (``re.DOTALL``).
    """
    shapes = dict(values)
    parts = []
    for literal, field, _spec, _conversion in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field:
            parts.append(f"(?P<{field}>{shapes.get(field, value)})")
    ending = f"[{re.escape(stop)}]?" if stop else ""
    return re.compile("".join(parts) + ending + r"\Z", re.DOTALL)


def read_back(template: str, text: str, *, stop: str = "") -> dict[str, str] | None:
    """The values ``template`` was formatted with to make ``text`` (surrounding spaces ignored).

    Returns:
        E.g. ``{"path": "/workspace/a.csv"}`` for ``("{path} does not exist", "/workspace/a.csv does
        not exist")``; ``{}`` for a template without placeholders that matches; None when ``text``
        was not made from ``template``.
    """
    match = template_pattern(template, stop=stop).match(text.strip())
    return match.groupdict() if match is not None else None
