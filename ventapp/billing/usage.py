"""The unit the meters hand to billing: one model call's tokens (spec 002, "上下文计量")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class CallUsage:
    """Tokens of one model call.

    Attributes:
        call_key: Stable within the run (the AIMessage id, else its position): with the run id it
            forms the ledger row's id, so settling the same run twice never double-counts.
        input_tokens: Prompt tokens (billing figure).
        output_tokens: Completion tokens.
        source: ``provider`` (from ``usage_metadata``) or ``estimate`` (offline count, invariant 3).
        main_thread: False for sub-agent and summarisation calls (they never set context occupancy).
    """

    call_key: str
    input_tokens: int
    output_tokens: int
    source: Literal["provider", "estimate"]
    main_thread: bool = True
