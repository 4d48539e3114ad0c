"""The second protocol every store implements: stored tool outputs and searchable history."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .models import (
    Compaction,
    CompactionResult,
    ContextWindow,
    HistorySearch,
    OutputRef,
    OutputSlice,
)
from .outputs import DEFAULT_MAX_CHARS

__all__ = ["ContextStore"]


@runtime_checkable
class ContextStore(Protocol):
    """Outputs offloaded from the prompt and the history compaction moves out of it.

    Every method on a missing session raises
    :class:`~helix_agents.core.SessionNotFoundError`; bad arguments raise a
    :class:`~helix_agents.core.ValidationError` and write nothing.
    """

    async def store_output(
        self,
        session_id: str,
        content: str,
        *,
        tool_name: str | None = None,
        key: str | None = None,
    ) -> OutputRef:
        """Store ``content``; a repeat under the same ``key`` returns the first reference."""
        ...

    async def get_output(self, session_id: str, output_id: str) -> OutputRef:
        """The reference of a stored output; :class:`OutputNotFoundError` if none."""
        ...

    async def read_output(
        self,
        session_id: str,
        output_id: str,
        *,
        start_line: int = 1,
        end_line: int | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> OutputSlice:
        """Lines ``start_line..end_line`` (1-based, inclusive), cut to ``max_chars``."""
        ...

    async def grep_output(
        self,
        session_id: str,
        output_id: str,
        pattern: str,
        *,
        context_lines: int = 2,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> OutputSlice:
        """Lines matching ``pattern`` (RE2), ``context_lines`` around each, cut to ``max_chars``."""
        ...

    async def record_compaction(self, session_id: str, compaction: Compaction) -> CompactionResult:
        """Record the summary and the new window start in one atomic step."""
        ...

    async def get_window(self, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on."""
        ...

    async def search_history(
        self,
        session_id: str,
        *,
        grep: str | None = None,
        tool_name: str | None = None,
        limit: int = 20,
    ) -> HistorySearch:
        """Rows of the archive and the live log that match, newest first, with the matching line."""
        ...
