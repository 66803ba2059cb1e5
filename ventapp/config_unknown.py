"""Keys of ``.env`` that VentAgent does not read: most often a misspelt setting (try19).

``CONTEXT_LIMT=64000`` in ``.env`` used to be ignored without a word, the app running with
``CONTEXT_LIMIT``'s default. :func:`unknown_keys` finds such keys so that :mod:`ventapp.config`
can log one WARNING each at start (with the closest setting, by :mod:`difflib`) and ``/health``
can list them under ``config_unknown_keys``. Only the ``.env`` file is looked at: the process
environment holds ``PATH``, ``HOME`` and everything else of the shell.

Not reported: keys other programs read (:data:`FOREIGN_PREFIXES`, :data:`FOREIGN_KEYS`; the
OpenAI client, LangSmith, Reflex, Vite, Granian, proxies) unless they are a near-certain typo of
one of ours (``OPENAI_API_KY``), and keys another value refers to as ``${NAME}`` (an MCP server's
token, or python-dotenv's own expansion inside ``.env``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

FOREIGN_PREFIXES = (
    "OPENAI_",
    "LANGSMITH_",
    "LANGCHAIN_",
    "LANGGRAPH_",
    "REFLEX_",
    "VITE_",
    "GRANIAN_",
    "NPM_CONFIG_",
    "NODE_",
    "PYTHON",
    "UV_",
    "PIP_",
    "HF_",
    "TIKTOKEN_",
    "SSL_",
    "REQUESTS_",
    "CURL_",
    "LC_",
)
"""Prefixes of variables the project's tools and libraries read themselves (case-insensitive)."""

FOREIGN_KEYS = frozenset(
    {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "TZ", "LANG", "PATH", "HOME", "NO_COLOR"}
)
"""Single variables other programs read (proxies are often written in lower case: compared upper)."""

CLOSE_ENOUGH = 0.6
"""difflib ratio from which a known key is offered as "did you mean" (difflib's own default)."""

SURELY_A_TYPO = 0.9
"""Ratio from which a foreign-looking key (``OPENAI_API_KY``) is still reported as a typo of ours."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"\$\{([^}:]+)(?::-[^}]*)?\}")


@dataclass(frozen=True)
class UnknownKey:
    """A key of ``.env`` that no part of VentAgent reads.

    Attributes:
        key: The key as written in ``.env``.
        suggestion: The closest key VentAgent reads (``""`` when none is close).
    """

    key: str
    suggestion: str = ""

    @property
    def sentence(self) -> str:
        """One English line for the log: ``"CONTEXT_LIMT in .env is not a setting VentAgent reads; did you
        mean CONTEXT_LIMIT?"`` (without a close key: ``"…reads; it is ignored"``)."""
        start = f"{self.key} in .env is not a setting VentAgent reads"
        return f"{start}; did you mean {self.suggestion}?" if self.suggestion else f"{start}; it is ignored"

    def public(self) -> dict[str, str]:
        """``{key, suggestion, detail}`` as ``/health`` lists it (``suggestion`` may be ``""``)."""
        return {"key": self.key, "suggestion": self.suggestion, "detail": self.sentence}


def referenced_names(texts: Iterable[str]) -> set[str]:
    """Names written as ``${NAME}`` (or ``${NAME:-default}``) in ``texts``."""
    return {match.group(1).strip() for text in texts for match in _REFERENCE.finditer(text)}


def unknown_keys(
    dotenv_raw: Mapping[str, str | None], known: Collection[str], referenced: Collection[str] = ()
) -> tuple[UnknownKey, ...]:
    """The keys of ``.env`` VentAgent does not read, in file order, each with its closest known key.

    Args:
        dotenv_raw: ``.env`` as python-dotenv reads it (key -> value; None for a line without ``=``,
            which is skipped like a key that is not a variable name).
        known: Every key VentAgent reads (:data:`ventapp.config.KEYS`).
        referenced: Names other values refer to as ``${NAME}``; they are inputs too, not typos.

    Returns:
        One :class:`UnknownKey` per such key; empty when every key is read by someone.
    """
    known_list = list(known)
    found = []
    for key, value in dotenv_raw.items():
        # A line without `=` (value None) or a key that is no variable name is not a setting written
        # wrong, and may be a pasted secret: /health is public, so it is not echoed.
        if key in known or key in referenced or value is None or not _NAME.fullmatch(key):
            continue
        upper = key.upper()  # `context_limit` is CONTEXT_LIMIT misspelt too (keys are case-sensitive)
        (closest, *_) = difflib.get_close_matches(upper, known_list, n=1, cutoff=CLOSE_ENOUGH) or [""]
        if upper in FOREIGN_KEYS or upper.startswith(FOREIGN_PREFIXES):
            if not closest or difflib.SequenceMatcher(None, upper, closest).ratio() < SURELY_A_TYPO:
                continue
        found.append(UnknownKey(key, closest))
    return tuple(found)
