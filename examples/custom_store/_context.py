"""The context store protocol of :class:`~.store.JsonDocumentStore`: stored tool outputs,
compactions and history search (docs/context-strategies.md).

Like the rest of the example, each method loads the session's document, lets
core check and shape the answer, and saves the document after a write.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TypeVar

from helix_agents.core.backend import (
    OutputReads,
    check_input,
    coerce,
    keep_output,
    output_not_found,
    parse_message_json,
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

from ._document import SessionDoc

__all__ = ["ContextMethods"]

_T = TypeVar("_T")


class ContextMethods(OutputReads):
    """:class:`~helix_agents.core.context.ContextStore` on the session documents; the output
    reads (``get_output``, ``read_output``, ``grep_output``) come from core's
    :class:`~helix_agents.core.backend.OutputReads`, on the two hooks below."""

    _clock: Callable[[], datetime]
    _check_open: Callable[[], None]
    _load: Callable[[str], SessionDoc]
    _write: Callable[[str], AbstractContextManager[SessionDoc]]
    _touch: Callable[[SessionDoc], None]

    async def store_output(
        self,
        session_id: str,
        content: str,
        *,
        tool_name: str | None = None,
        key: str | None = None,
    ) -> OutputRef:
        """Store ``content``; a repeat under the same ``key`` returns the first reference."""
        with self._write(session_id) as doc:
            content, tool_name, key = check_output_args(session_id, content, tool_name, key)
            ctx = doc.context
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
            self._touch(doc)
            return ref

    async def _check_context(self, session_id: str, check: Callable[[], _T]) -> _T:
        """``check()`` once the store is open; a missing session is reported first."""
        self._check_open()
        return await check_input(session_id, check, self._require)

    async def _require(self, session_id: str) -> None:
        self._load(session_id)

    async def _load_output(
        self, session_id: str, output_id: str, content: bool
    ) -> tuple[OutputRef, str]:
        found = self._load(session_id).context.outputs.get(output_id)
        if found is None:
            raise output_not_found(session_id, output_id)
        return found

    async def record_compaction(self, session_id: str, compaction: Compaction) -> CompactionResult:
        """Record the summary and the new window start in one step."""
        with self._write(session_id) as doc:
            compaction = coerce(Compaction, compaction, session_id)
            ctx = doc.context
            start = ctx.compactions[-1][0] if ctx.compactions else 0
            check_compaction(session_id, compaction, start, doc.message_count)
            result = compaction_result(compaction, len(ctx.compactions) + 1, ctx.preserved)
            ctx.compactions.append((compaction.boundary, summary_row(compaction)))
            ctx.preserved = result.preserved
            self._touch(doc)
            return result

    async def get_window(self, session_id: str) -> ContextWindow:
        """The latest summary row and the rows from the window start on."""
        doc = self._load(session_id)
        ctx = doc.context
        start, summary = ctx.compactions[-1] if ctx.compactions else (0, None)
        rows = doc.rows[max(0, start - doc.first_index) :]
        return ContextWindow(
            start=start,
            summary=summary,
            messages=tuple(parse_message_json(row) for row in rows),
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
        doc = self._load(session_id)
        query = HistoryQuery.build(session_id, grep, tool_name, limit)
        return search_rows(query, doc.first_index, doc.rows, doc.context.archive)
