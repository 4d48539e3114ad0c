"""The context store protocol on the memory store: outputs, compactions, history search."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TypeVar

from helix_agents.core import parse_message
from helix_agents.core.backend import (
    OutputReads,
    check_input,
    coerce,
    keep_output,
    output_not_found,
    replayed_output,
)
from helix_agents.core.context import (
    Compaction,
    CompactionResult,
    ContextWindow,
    HistoryQuery,
    HistorySearch,
    OutputRef,
    check_compaction,
    check_output_args,
    compaction_result,
    describe_output,
    new_output_id,
    search_rows,
    summary_row,
)

from ._state import SessionData

__all__ = ["ContextMethods"]

_T = TypeVar("_T")


class ContextMethods(OutputReads):
    """:class:`~helix_agents.core.context.ContextStore` for :class:`MemoryStateStore`."""

    _clock: Callable[[], datetime]
    _session: Callable[[str], AbstractContextManager[SessionData]]
    _touch: Callable[[SessionData], None]
    _check_open: Callable[[], None]

    async def _check_context(self, session_id: str, check: Callable[[], _T]) -> _T:
        """``check()`` once the store is open; a missing session is reported first."""
        self._check_open()
        return await check_input(session_id, check, self._require)

    async def _require(self, session_id: str) -> None:
        with self._session(session_id):
            pass

    async def store_output(
        self,
        session_id: str,
        content: str,
        *,
        tool_name: str | None = None,
        key: str | None = None,
    ) -> OutputRef:
        """Store ``content``; a repeat under the same ``key`` returns the first reference."""
        content, tool_name, key = await self._check_context(
            session_id, lambda: check_output_args(session_id, content, tool_name, key)
        )
        with self._session(session_id) as session:
            ctx = session.context
            replayed = replayed_output(ctx.outputs, ctx.keys, key)
            if replayed is not None:
                return replayed
            ref = describe_output(
                content,
                output_id=new_output_id(),
                created_at=self._clock(),
                tool_name=tool_name,
                key=key,
            )
            keep_output(ctx.outputs, ctx.keys, ref, content)
            self._touch(session)
            return ref

    async def _load_output(
        self, session_id: str, output_id: str, content: bool
    ) -> tuple[OutputRef, str]:
        with self._session(session_id) as session:
            found = session.context.outputs.get(output_id)
        if found is None:
            raise output_not_found(session_id, output_id)
        return found

    async def record_compaction(self, session_id: str, compaction: Compaction) -> CompactionResult:
        """Record the summary and the new window start in one step."""
        compaction = await self._check_context(
            session_id, lambda: coerce(Compaction, compaction, session_id)
        )
        with self._session(session_id) as session:
            ctx = session.context
            start = ctx.compactions[-1][0] if ctx.compactions else 0
            check_compaction(session_id, compaction, start, session.message_count)
            number = len(ctx.compactions) + 1
            result = compaction_result(compaction, number, ctx.preserved)
            ctx.compactions.append((compaction.boundary, summary_row(compaction)))
            ctx.preserved = result.preserved
            self._touch(session)
            return result

    async def get_window(self, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on."""
        await self._check_context(session_id, lambda: None)
        with self._session(session_id) as session:
            ctx = session.context
            start, summary = ctx.compactions[-1] if ctx.compactions else (0, None)
            skip = max(0, start - session.first_index)
            rows = tuple(parse_message(row) for row in session.rows[skip:])
            return ContextWindow(
                start=start,
                summary=summary,
                messages=rows,
                compactions=len(ctx.compactions),
                preserved=ctx.preserved,
            )

    async def search_history(
        self,
        session_id: str,
        *,
        grep: str | None = None,
        tool_name: str | None = None,
        limit: int = 20,
    ) -> HistorySearch:
        """Rows of the archive and the live log that match, newest first."""
        query = await self._check_context(
            session_id, lambda: HistoryQuery.build(session_id, grep, tool_name, limit)
        )
        with self._session(session_id) as session:
            # Copies of the lists (rows are never changed in place): the search runs unlocked.
            first, live = session.first_index, list(session.rows)
            archive = list(session.context.archive)
        return search_rows(query, first, live, archive)
