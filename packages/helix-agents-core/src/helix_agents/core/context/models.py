"""The values the context store protocol accepts and returns."""

from __future__ import annotations

from typing import Annotated

from pydantic import AwareDatetime, ConfigDict, Field

from ..messages import ContextMessage, Message, Value
from .strategy import ContextStrategy

__all__ = [
    "Compaction",
    "CompactionResult",
    "ContextWindow",
    "HistoryHit",
    "HistorySearch",
    "OutputLine",
    "OutputRef",
    "OutputSlice",
]

NonNegative = Annotated[int, Field(ge=0)]


class _Value(Value):
    model_config = ConfigDict(frozen=True, extra="forbid")


class OutputLine(_Value):
    """One line of a stored output, numbered from 1; ``match`` marks a grep hit."""

    number: int
    text: str
    match: bool = False


class OutputRef(_Value):
    """What a stored tool output is, without its text: enough to summarise it in the prompt.

    ``chars`` counts Unicode code points and ``lines`` lines (a final newline
    ends the last line rather than starting an empty one). ``head``, ``tail``
    and ``highlights`` are the previews the offload summary shows; they are
    computed once, when the output is stored. ``replayed`` is true when the
    caller's ``key`` had already stored an output and this is that output.
    """

    output_id: str
    key: str | None = None
    tool_name: str | None = None
    chars: NonNegative
    lines: NonNegative
    sha256: str
    head: tuple[OutputLine, ...]
    tail: tuple[OutputLine, ...]
    highlights: tuple[OutputLine, ...]
    created_at: AwareDatetime
    replayed: bool = False


class OutputSlice(_Value):
    """Lines read back from a stored output, by range or by grep.

    ``truncated`` says the answer was cut to fit ``max_chars``; ``next_line``
    is where to continue. ``matches`` counts the matching lines found (grep
    only). ``note`` says in words what happened, for the model.
    """

    output_id: str
    lines: tuple[OutputLine, ...]
    total_lines: int
    total_chars: int
    matches: int = 0
    truncated: bool = False
    next_line: int | None = None
    note: str

    def render(self) -> str:
        """The slice as tool-result text: each line with its number, then the note."""
        width = len(str(self.total_lines)) if self.total_lines else 1
        body = [f"{ln.number:>{width}}{':' if ln.match else '-'} {ln.text}" for ln in self.lines]
        return "\n".join([*body, f"[{self.note}]"])


class Compaction(_Value):
    """Move the window start to ``boundary`` and record ``summary`` in place of the rows before it.

    ``expect_window_start`` makes the write conditional on the window start the
    caller read. Under ``hybrid`` and ``dynamic`` the session's rows become
    preserved: from then on retention archives rows instead of dropping them.
    """

    boundary: NonNegative
    summary: str
    strategy: ContextStrategy = "hybrid"
    expect_window_start: NonNegative | None = None


class CompactionResult(_Value):
    """Where the window starts after a compaction, and how many compactions the session had."""

    window_start: int
    compactions: int
    preserved: bool


class ContextWindow(_Value):
    """What the model sees: the latest summary row (if any), then the rows from ``start`` on."""

    start: int
    summary: ContextMessage | None
    messages: tuple[Message, ...]
    compactions: int
    preserved: bool


class HistoryHit(_Value):
    """A row that matched a history search: its absolute index and the line that matched."""

    index: int
    role: str
    tool_name: str | None
    line_number: int
    line: str
    archived: bool


class HistorySearch(_Value):
    """Hits newest first; ``truncated`` when more rows matched than the limit."""

    hits: tuple[HistoryHit, ...]
    truncated: bool
    note: str
