"""The model's reasoning over one run: a paragraph per model call, the same live and stored.

Reasoning arrives as ``thinking_token`` pieces without a marker of which model call they
belong to. A piece that comes after the answer or the tool cards grew since the last piece
belongs to a later call and starts a paragraph of its own — the one rule the browser's live
answer (:func:`ventapp.state.live_answer.reduce_event`) and the run's transcript
(:class:`ventapp.agent.kernel.RunTranscript`, what is saved with the answer) both apply, so a
re-read answer shows the reasoning block the live one showed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PARAGRAPH_BREAK = "\n\n"
"""Between the reasoning of two model calls."""

MAX_STORED_REASONING_CHARS = 100_000
"""Longest reasoning kept with an answer (characters; as long as the longest message a person may
send, ``MAX_MESSAGE_CHARS``). A longer trace is cut there, with :data:`CUT_MARKER`: it is there to
be glanced at after a reload, and every re-read of the session carries it."""
CUT_MARKER = PARAGRAPH_BREAK + "[…]"

Position = tuple[int, int]
"""``(tool cards, answer characters)`` when a piece of reasoning arrived."""


def reasoning_gap(started: bool, last_at: Position, at: Position) -> str:
    """What goes before a piece arriving at ``at``: a paragraph break when it starts a later call's reasoning.

    Args:
        started: Some reasoning came before (nothing goes before the first piece).
        last_at: Where the previous piece arrived.
        at: Where this one arrives.
    """
    return PARAGRAPH_BREAK if started and at != last_at else ""


def stored_reasoning(reasoning: str) -> str:
    """``reasoning`` as saved with an answer: at most :data:`MAX_STORED_REASONING_CHARS` characters and the marker."""
    if len(reasoning) <= MAX_STORED_REASONING_CHARS:
        return reasoning
    return reasoning[:MAX_STORED_REASONING_CHARS] + CUT_MARKER


@dataclass
class ReasoningText:
    """A run's reasoning as it streams; appending is O(1) per piece, the text is joined on demand.

    Attributes:
        chars: Length of :attr:`text` (characters).
    """

    chars: int = 0
    _pieces: list[str] = field(default_factory=list)
    _last_at: Position = (0, 0)

    @property
    def text(self) -> str:
        """The reasoning so far, a paragraph per model call."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def append(self, content: str, at: Position) -> None:
        """Add a streamed piece that arrived at ``at`` (see :func:`reasoning_gap`)."""
        if not content:
            return
        gap = reasoning_gap(self.chars > 0, self._last_at, at)
        self._pieces.append(gap + content)
        self.chars += len(gap) + len(content)
        self._last_at = at
