"""The context store (docs/context-strategies.md), once for every engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..context.history import (
    HistoryQuery,
    check_compaction,
    compaction_result,
    search_rows,
    summary_row,
)
from ..context.models import (
    Compaction,
    CompactionResult,
    ContextWindow,
    HistorySearch,
    OutputRef,
)
from ..context.outputs import check_output_args, describe_output, new_output_id
from ..context.reads import OutputReads, output_not_found
from ..rules import coerce
from ..seam import Changes, RowSpan, Snapshot, Want
from ._plumbing import Plumbing, row_message

__all__ = ["ContextMethods"]

_T = TypeVar("_T")
_WINDOW = Want(window=True)
_EVERYTHING = Want(rows=RowSpan(0), archive=True)


class ContextMethods(OutputReads, Plumbing):
    """Stored outputs, compactions, the window and history search."""

    async def _check_context(self, session_id: str, check: Callable[[], _T]) -> _T:
        return await self._checked(session_id, check)

    async def _load_output(
        self, session_id: str, output_id: str, content: bool
    ) -> tuple[OutputRef, str]:
        snap = await self._snapshot(session_id, Want(output_id=output_id, output_text=content))
        if snap.output is None:
            raise output_not_found(session_id, output_id)
        return snap.output

    async def store_output(
        self,
        session_id: str,
        content: str,
        *,
        tool_name: str | None = None,
        key: str | None = None,
    ) -> OutputRef:
        """Store ``content``; a repeat under the same ``key`` returns the first reference."""
        text, tool, okey = await self._checked(
            session_id, lambda: check_output_args(session_id, content, tool_name, key)
        )

        def plan(snap: Snapshot) -> tuple[Changes | None, OutputRef]:
            if snap.keyed_output is not None:
                return None, snap.keyed_output.model_copy(update={"replayed": True})
            ref = describe_output(
                text, output_id=new_output_id(), created_at=self._clock(), tool_name=tool, key=okey
            )
            return Changes(activity=self._activity(snap), output=(ref, text)), ref

        return await self._write(session_id, Want(output_key=okey), plan)

    async def record_compaction(self, session_id: str, compaction: Compaction) -> CompactionResult:
        """Record the summary and the new window start in one atomic step."""
        checked = await self._checked(
            session_id, lambda: coerce(Compaction, compaction, session_id)
        )

        def plan(snap: Snapshot) -> tuple[Changes, CompactionResult]:
            check_compaction(session_id, checked, snap.window_start, snap.message_count)
            result = compaction_result(checked, snap.compactions + 1, snap.preserved)
            changes = Changes(
                activity=self._activity(snap),
                compaction=(checked.boundary, summary_row(checked)),
                preserve=result.preserved,
            )
            return changes, result

        return await self._write(session_id, Want(), plan)

    async def get_window(self, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on."""
        snap = await self._snapshot(session_id, _WINDOW)
        return ContextWindow(
            start=snap.window_start,
            summary=snap.summary,
            messages=tuple(row_message(row) for row in snap.rows),
            compactions=snap.compactions,
            preserved=snap.preserved,
        )

    async def search_history(
        self,
        session_id: str,
        *,
        grep: str | None = None,
        tool_name: str | None = None,
        limit: int = 20,
    ) -> HistorySearch:
        """Rows of the archive and the live log that match, newest first, with the matching line."""
        query = await self._checked(
            session_id, lambda: HistoryQuery.build(session_id, grep, tool_name, limit)
        )
        snap = await self._snapshot(session_id, _EVERYTHING)
        return search_rows(query, snap.first_index, snap.rows, snap.archive)
